package server

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func TestAuthenticate(t *testing.T) {
	a := newAuthenticator(map[string]string{"s3cret": "alice", "other": "bob", "": "nobody"})
	tests := []struct {
		name   string
		header []string
		want   string
		code   codes.Code
	}{
		{"bearer", []string{"Bearer s3cret"}, "alice", codes.OK},
		{"scheme is case-insensitive", []string{"bearer   other "}, "bob", codes.OK},
		{"missing", nil, "", codes.Unauthenticated},
		{"wrong scheme", []string{"Basic s3cret"}, "", codes.Unauthenticated},
		{"prefix of a token", []string{"Bearer s3cre"}, "", codes.Unauthenticated},
		{"empty token", []string{"Bearer "}, "", codes.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.header != nil {
				ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", tt.header[0]))
			}
			p, err := a.authenticate(ctx)
			if status.Code(err) != tt.code || p != tt.want {
				t.Errorf("authenticate = %q, %v; want %q, %v", p, err, tt.want, tt.code)
			}
		})
	}
	if p, err := newAuthenticator(nil).authenticate(context.Background()); p != LocalPrincipal || err != nil {
		t.Errorf("without tokens: %q, %v", p, err)
	}
}

// The recover interceptor turns a handler's panic into INTERNAL; calls outside BridgeService skip auth.
func TestInterceptors(t *testing.T) {
	svc := New(mcpcore.New(mcpcore.Options{}), Options{Tokens: map[string]string{"t": "p"}})
	defer svc.Close(context.Background())
	unary := svc.UnaryInterceptor()
	_, err := unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"}, func(ctx context.Context, _ any) (any, error) {
		panic("boom")
	})
	if status.Code(err) != codes.Internal {
		t.Errorf("panic → %v, want INTERNAL", err)
	}
	_, err = unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: servicePrefix + "ListSessions"}, func(ctx context.Context, _ any) (any, error) {
		t.Error("handler ran without a token")
		return nil, nil
	})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token → %v", err)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer t"))
	_, err = unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: servicePrefix + "ListSessions"}, func(ctx context.Context, _ any) (any, error) {
		if Principal(ctx) != "p" {
			t.Errorf("principal %q", Principal(ctx))
		}
		return nil, nil
	})
	if err != nil {
		t.Error(err)
	}
}
