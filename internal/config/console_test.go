package config

import (
	"strings"
	"testing"
)

func TestConsoleKey(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    bool
		wantErr string
	}{
		{name: "unset is on", yaml: "listen: {http: 127.0.0.1:8080}\n", want: true},
		{name: "on", yaml: "console: {enabled: true}\n", want: true},
		{name: "off", yaml: "console: {enabled: false}\n", want: false},
		{name: "empty block is on", yaml: "console: {}\n", want: true},
		{name: "unknown key", yaml: "console: {enable: false}\n", wantErr: "console.enable: unknown key"},
		{name: "not a bool", yaml: "console: {enabled: maybe}\n", wantErr: "console.enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Console.On(); got != tt.want {
				t.Errorf("Console.On() = %v, want %v", got, tt.want)
			}
		})
	}
	if !Default().Console.On() {
		t.Error("the default configuration has the console off")
	}
}
