package config

import (
	"slices"
	"strings"
	"testing"
)

func TestReplicaAndPeers(t *testing.T) {
	for _, tt := range []struct {
		name, content, wantErr string
	}{
		{"replica", "sessions:\n  replica: mcp-bridge-0\n", ""},
		{"replica and peers", "sessions:\n  replica: r1\n  peers: [127.0.0.1:50051, mcp-bridge-headless:50051]\n", ""},
		{"upper case", "sessions:\n  replica: R1\n", "sessions.replica: replica name \"R1\" is not a DNS label"},
		{"a dot", "sessions:\n  replica: r.1\n", "not a DNS label"},
		{"leading dash", "sessions:\n  replica: -r1\n", "not a DNS label"},
		{"too long", "sessions:\n  replica: " + strings.Repeat("r", 64) + "\n", "1 to 63 characters"},
		{"bad peer", "sessions:\n  replica: r1\n  peers: [nohostport]\n", "sessions.peers[0]: bad address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, "c.yaml", tt.content))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Sessions.Replica == "" {
					t.Error("replica not loaded")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Load = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	cfg, err := Load(writeFile(t, "c.yaml", "sessions:\n  replica: r1\n  peers: [a:1, b:2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Sessions.Peers, []string{"a:1", "b:2"}) {
		t.Errorf("peers = %v", cfg.Sessions.Peers)
	}
}
