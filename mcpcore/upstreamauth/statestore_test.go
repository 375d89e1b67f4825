package upstreamauth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

func testGrant(server, owner, access string) (grantKey, *oauth2.Config, *oauth2.Token) {
	k := grantKey{Server: server, Resource: "https://" + server + ".example/mcp", Owner: owner}
	cfg := &oauth2.Config{ClientID: "bridge", Endpoint: oauth2.Endpoint{TokenURL: "https://as.example/token"}, Scopes: []string{"mcp"}}
	return k, cfg, &oauth2.Token{AccessToken: access, RefreshToken: "r-" + access, Expiry: time.Now().Add(time.Hour)}
}

// Grants kept in the state store come back in a new process (a new TokenStore on the same store), and a
// forgotten grant is deleted there.
func TestTokenStoreInStateStore(t *testing.T) {
	ctx := context.Background()
	st := state.NewMemory()
	s, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range [][3]string{{"gh", "alice", "a1"}, {"gh", "bob", "b1"}, {"odd/name", "carol/x", "c1"}} {
		k, cfg, tok := testGrant(g[0], g[1], g[2])
		s.put(k, cfg, tok, ctx)
	}
	if err := s.Forget("gh", "bob"); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.grants) != 2 {
		t.Fatalf("grants after reopening = %d, want 2 (bob's was forgotten)", len(again.grants))
	}
	k, _, _ := testGrant("odd/name", "carol/x", "")
	if g := again.grants[k]; g == nil || g.AccessToken != "c1" || g.RefreshToken != "r-c1" {
		t.Fatalf("carol's grant = %+v", g)
	}
	if src := again.restore(k, nil); src == nil {
		t.Fatal("no token source for a kept grant")
	}
}

// The token file of before (oauth.tokenStoreFile) is read once: its grants move into the state store, the
// state store's own grants win, and the file is renamed so that it is not read again.
func TestMigrateTokenFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens")
	key := []byte(strings.Repeat("k", 32))
	file, err := OpenTokenStore(path, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range [][3]string{{"gh", "alice", "old-a"}, {"gh", "bob", "old-b"}} {
		k, cfg, tok := testGrant(g[0], g[1], g[2])
		file.put(k, cfg, tok, ctx)
	}
	st := state.NewMemory()
	s, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, cfg, tok := testGrant("gh", "alice", "new-a")
	s.put(k, cfg, tok, ctx)

	n, err := s.MigrateTokenFile(path, key)
	if err != nil || n != 1 {
		t.Fatalf("MigrateTokenFile = %d, %v; want 1 grant moved (alice's is the state store's)", n, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the token file is still there: %v", err)
	}
	if _, err := os.Stat(path + ".migrated"); err != nil {
		t.Errorf("the token file was not renamed: %v", err)
	}
	again, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := again.grants[k]; g == nil || g.AccessToken != "new-a" {
		t.Errorf("alice's grant = %+v, want the state store's", g)
	}
	kb, _, _ := testGrant("gh", "bob", "")
	if g := again.grants[kb]; g == nil || g.AccessToken != "old-b" {
		t.Errorf("bob's grant = %+v, want the file's", g)
	}
	if n, err := s.MigrateTokenFile(path, key); err != nil || n != 0 {
		t.Errorf("a second migration = %d, %v; want nothing to do", n, err)
	}
	if _, err := s.MigrateTokenFile(filepath.Join(t.TempDir(), "x"), []byte(strings.Repeat("w", 32))); err != nil {
		t.Errorf("a missing file: %v", err)
	}
}

// Replicas sharing their state each open a token store on the same store at start. A grant one of them is
// given afterwards — and a token it refreshes — is what the other uses when it takes the session over:
// restore reads the record, not only what was loaded at start (issue 32: before, the other replica had no
// grant and the person had to authorize again).
func TestTokenStoreSeesAnotherReplicasGrant(t *testing.T) {
	ctx := context.Background()
	st := state.NewMemory()
	one, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := OpenStateTokenStore(ctx, st, nil) // started before the grant exists
	if err != nil {
		t.Fatal(err)
	}
	k, cfg, tok := testGrant("gh", "alice", "a1")
	one.put(k, cfg, tok, ctx)
	src := other.restore(k, nil)
	if src == nil {
		t.Fatal("the other replica has no token source for a grant given through the first")
	}
	if got, err := src.Token(); err != nil || got.AccessToken != "a1" {
		t.Fatalf("token = %v, %v; want a1", got, err)
	}
	// A refresh through the first is seen by the other's next restore.
	_, _, newer := testGrant("gh", "alice", "a2")
	one.update(k, newer)
	if got, _ := other.restore(k, nil).Token(); got.AccessToken != "a2" {
		t.Fatalf("after a refresh elsewhere: token %q, want a2", got.AccessToken)
	}
	// A store that forgot the grant in memory and finds no record keeps nothing it should not.
	if err := one.Forget("gh", "alice"); err != nil {
		t.Fatal(err)
	}
	fresh, err := OpenStateTokenStore(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.restore(k, nil) != nil {
		t.Fatal("a forgotten grant came back")
	}
}
