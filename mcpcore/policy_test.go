package mcpcore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"echo", "echo", true},
		{"echo", "echo2", false},
		{"echo*", "echo2", true},
		{"*echo", "my-echo", true},
		{"e?ho", "echo", true},
		{"e?ho", "eho", false},
		{"?", "é", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"file:///docs/*", "file:///docs/a/b.md", true},
		{"file:///docs/*", "file:///etc/passwd", false},
		{"*.md", "file:///x.md.bak", false},
		{"**", "x", true},
		{"a*a*a*a*b", strings.Repeat("a", 200), false},
	} {
		if got := Glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	f := Filter{Allow: []string{"echo*", "greet"}, Deny: []string{"echo-secret"}}
	for name, want := range map[string]bool{"echo": true, "echo-x": true, "echo-secret": false, "greet": true, "other": false} {
		if got := f.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if !(Filter{}).Allows("x") || !(Filter{Deny: []string{"y"}}).Allows("x") {
		t.Error("an empty allow list allows everything not denied")
	}
	var p *Policy
	if !p.AllowsOwner("anyone") || !(&Policy{}).AllowsOwner("anyone") {
		t.Error("no AllowedOwners allows everyone")
	}
	if (&Policy{AllowedOwners: []string{"team-*"}}).AllowsOwner("bob") {
		t.Error("bob is not team-*")
	}
}

// policyCore is memCore with two more servers over the same in-process SDK server: "strict", whose policy
// denies what the test says, and "owned", which only alice may use.
func policyCore(t *testing.T, strict Policy) *Core {
	return memCore(t, nil, func(o *Options) {
		o.Servers["strict"] = ServerConfig{Transport: transportTest, Policy: &strict}
		o.Servers["owned"] = ServerConfig{Transport: transportTest, Policy: &Policy{AllowedOwners: []string{"ali*"}}}
	})
}

func allTools(t *testing.T, s *Session) []string {
	t.Helper()
	var names []string
	cursor := ""
	for {
		r, err := s.ListTools(tctx(t), &mcp.ListToolsParams{Cursor: cursor}, CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range r.Tools {
			names = append(names, tool.Name)
		}
		if cursor = r.NextCursor; cursor == "" {
			return names
		}
	}
}

func TestPolicyFiltersAndRefuses(t *testing.T) {
	for _, pin := range []string{"2025-11-25", ""} {
		t.Run("pin="+pin, func(t *testing.T) {
			c := policyCore(t, Policy{
				Tools:     Filter{Deny: []string{"add-tool", "added-*", "fail"}},
				Prompts:   Filter{Allow: []string{"confirm"}},
				Resources: Filter{Allow: []string{"test://items/*"}},
			})
			strict := open(t, c, "strict", pin, allCaps)
			open := open(t, c, "mem", pin, allCaps)
			ctx := tctx(t)

			tools := allTools(t, strict)
			if slices.Contains(tools, "add-tool") || slices.Contains(tools, "fail") || !slices.Contains(tools, "echo") {
				t.Fatalf("strict tools = %v: want echo and neither add-tool nor fail", tools)
			}
			// A hidden tool called by name is refused and never reaches the server: add-tool would add a tool.
			_, err := strict.CallTool(ctx, &mcp.CallToolParams{Name: "add-tool"}, CallOptions{})
			if !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("CallTool(add-tool) = %v, want ErrPermissionDenied", err)
			}
			_, _, err = strict.CallToolOrTask(ctx, &mcp.CallToolParams{Name: "add-tool"}, CallOptions{Task: true})
			if !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("CallToolOrTask(add-tool, task) = %v, want ErrPermissionDenied", err)
			}
			if got := allTools(t, open); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "added-") }) {
				t.Fatalf("a refused call reached the server: tools %v", got)
			}
			// A tool the server adds later obeys the same rules. Lists are read after list_changed, which the
			// SDK may need to drop a cached (2026-07-28 ttlMs) result.
			openEvents, strictEvents := open.Subscribe(64), strict.Subscribe(64)
			if got := callText(t, open, "add-tool", nil, CallOptions{}); got != "added" {
				t.Fatalf("add-tool on the open server = %q", got)
			}
			for _, sub := range []*Subscription{openEvents, strictEvents} {
				waitEvent(t, sub, func(ev Event) bool { return ev.Kind == EventToolsListChanged })
			}
			openTools := allTools(t, open)
			i := slices.IndexFunc(openTools, func(n string) bool { return strings.HasPrefix(n, "added-") })
			if i < 0 {
				t.Fatalf("the added tool is not listed on the open server: %v", openTools)
			}
			added := openTools[i]
			if slices.Contains(allTools(t, strict), added) {
				t.Fatalf("strict lists %s, which the policy denies", added)
			}
			if _, err := strict.CallTool(ctx, &mcp.CallToolParams{Name: added}, CallOptions{}); !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("CallTool(%s) = %v, want ErrPermissionDenied", added, err)
			}

			prompts, err := strict.ListPrompts(ctx, nil, CallOptions{})
			if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "confirm" {
				t.Fatalf("ListPrompts = %v, %v: want confirm alone", prompts, err)
			}
			if _, err := strict.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x"}}, CallOptions{}); !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("GetPrompt(greet) = %v, want ErrPermissionDenied", err)
			}
			if _, err := strict.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"}}, CallOptions{}); !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("Complete(greet) = %v, want ErrPermissionDenied", err)
			}

			res, err := strict.ListResources(ctx, nil, CallOptions{})
			if err != nil || len(res.Resources) != 0 {
				t.Fatalf("ListResources = %v, %v: want none (only test://items/* is allowed)", res, err)
			}
			tmpl, err := strict.ListResourceTemplates(ctx, nil, CallOptions{})
			if err != nil || len(tmpl.ResourceTemplates) != 1 {
				t.Fatalf("ListResourceTemplates = %v, %v: want test://items/{id}", tmpl, err)
			}
			if _, err := strict.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://greeting"}, CallOptions{}); !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("ReadResource(test://greeting) = %v, want ErrPermissionDenied", err)
			}
			if err := strict.SubscribeResource(ctx, "test://greeting"); !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("SubscribeResource(test://greeting) = %v, want ErrPermissionDenied", err)
			}
			if _, err := strict.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/7"}, CallOptions{}); err != nil {
				t.Fatalf("ReadResource(test://items/7): %v", err)
			}
			// The open server's lists are whole.
			if r, err := open.ListResources(ctx, nil, CallOptions{}); err != nil || len(r.Resources) == 0 {
				t.Fatalf("open ListResources = %v, %v", r, err)
			}
		})
	}
}

func TestPolicyAllowedOwners(t *testing.T) {
	c := policyCore(t, Policy{})
	ctx := context.Background()
	_, errBob := c.Open(ctx, OpenParams{Owner: "bob", Server: "owned"})
	_, errNone := c.Open(ctx, OpenParams{Owner: "bob", Server: "no-such-server"})
	if !errors.Is(errBob, ErrServerNotFound) || !errors.Is(errNone, ErrServerNotFound) {
		t.Fatalf("Open by bob = %v; of a missing server = %v: want ErrServerNotFound for both", errBob, errNone)
	}
	if strings.ReplaceAll(errBob.Error(), "owned", "X") != strings.ReplaceAll(errNone.Error(), "no-such-server", "X") {
		t.Errorf("the errors tell the two apart: %q vs %q", errBob, errNone)
	}
	open(t, c, "owned", "", HostCapabilities{}) // alice
}

// A resource the policy denies is not told of in resource-updated events either.
func TestPolicyDropsUpdatesOfDeniedResources(t *testing.T) {
	c := policyCore(t, Policy{Resources: Filter{Allow: []string{"test://items/*"}}})
	for _, server := range []string{"strict", "mem"} {
		s := open(t, c, server, "2025-11-25", allCaps)
		sub := s.Subscribe(64)
		// Subscribed behind the policy's back, as if the server sent updates nobody asked for.
		g, err := s.acquire(tctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.cs.Subscribe(tctx(t), &mcp.SubscribeParams{URI: "test://greeting"}); err != nil {
			t.Fatal(err)
		}
		callText(t, s, "touch", nil, CallOptions{}) // sends resources/updated for test://greeting
		callText(t, s, "add-tool", nil, CallOptions{})
		var updated bool
		waitEvent(t, sub, func(ev Event) bool {
			updated = updated || (ev.Kind == EventResourceUpdated && ev.URI == "test://greeting")
			return ev.Kind == EventToolsListChanged
		})
		if want := server == "mem"; updated != want {
			t.Errorf("%s: resource-updated event for test://greeting seen = %v, want %v", server, updated, want)
		}
	}
}
