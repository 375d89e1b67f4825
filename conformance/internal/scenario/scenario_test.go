package scenario

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestElicitAnswer(t *testing.T) {
	tests := []struct {
		name   string
		mode   string
		schema any
		want   map[string]any
	}{
		{name: "url mode", mode: "url", want: nil},
		{
			name: "defaults, booleans and required fields",
			mode: "form",
			schema: map[string]any{
				"properties": map[string]any{
					"name":      map[string]any{"type": "string", "default": "John Doe"},
					"subscribe": map[string]any{"type": "boolean"},
					"email":     map[string]any{"type": "string", "format": "email"},
					"age":       map[string]any{"type": "integer", "minimum": 18.0},
					"color":     map[string]any{"type": "string", "enum": []any{"red", "green"}},
					"optional":  map[string]any{"type": "string"},
				},
				"required": []any{"email", "age", "color"},
			},
			want: map[string]any{"name": "John Doe", "subscribe": true, "email": "host@example.com", "age": 18.0, "color": "red"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ElicitAnswer(tt.mode, tt.schema)
			if got.Action != "accept" {
				t.Errorf("action %q, want accept", got.Action)
			}
			if diff := cmp.Diff(tt.want, got.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}
