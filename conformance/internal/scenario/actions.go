package scenario

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allTools lists every tool, following cursors.
func (r *Run) allTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	cursor := ""
	for {
		res, err := r.Session.ListTools(ctx, cursor)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		cursor = res.NextCursor
	}
}

func (r *Run) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := r.Session.CallTool(ctx, name, args)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	if res.IsError {
		r.Logger.Warn("tool returned an error result", "tool", name, "content", contentText(res.Content))
	}
	return res, nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// listTools: connect and list tools (initialize, request-metadata, json-schema-ref-no-deref). Some of these
// mock servers declare no tools capability; the client then refuses tools/list without asking the server
// (ErrNotOffered), which is what it should do, so that is not a failure here.
func listTools(ctx context.Context, r *Run) error {
	_, err := r.allTools(ctx)
	if errors.Is(err, ErrNotOffered) {
		r.Logger.Info("the server offers no tools; not listing them", "err", err)
		return nil
	}
	return err
}

// toolsCall: list tools and call add_numbers.
func toolsCall(ctx context.Context, r *Run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == "add_numbers" }) {
		return errors.New("the server has no add_numbers tool")
	}
	_, err = r.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	return err
}

// callTool lists tools and calls one; the host answers whatever the server asks on the way.
func callTool(name string, args map[string]any) Action {
	return func(ctx context.Context, r *Run) error {
		if _, err := r.allTools(ctx); err != nil {
			return err
		}
		_, err := r.call(ctx, name, args)
		return err
	}
}

// requestState drives the multi-round-trip tools of sep-2322-client-request-state. Each is called; a tool
// the client rejects is logged, not fatal: the suite's checks judge what reached the server.
func requestState(ctx context.Context, r *Run) error {
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if _, err := r.call(ctx, name, nil); err != nil {
			r.Logger.Warn("call failed", "tool", name, "err", err)
		}
	}
	return nil
}

// exerciseEverything calls every tool, reads every resource and gets every prompt once
// (http-standard-headers checks the standard headers on each method).
func exerciseEverything(ctx context.Context, r *Run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tools {
		if _, err := r.call(ctx, t.Name, nil); err != nil {
			errs = append(errs, err)
		}
	}
	resources, err := r.Session.ListResources(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("resources/list: %w", err))
	} else {
		for _, res := range resources.Resources {
			if err := r.Session.ReadResource(ctx, res.URI); err != nil {
				errs = append(errs, fmt.Errorf("resources/read %s: %w", res.URI, err))
			}
		}
	}
	prompts, err := r.Session.ListPrompts(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("prompts/list: %w", err))
	} else {
		for _, p := range prompts.Prompts {
			args := map[string]string{}
			for _, a := range p.Arguments {
				if a.Required {
					args[a.Name] = "conformance"
				}
			}
			if err := r.Session.GetPrompt(ctx, p.Name, args); err != nil {
				errs = append(errs, fmt.Errorf("prompts/get %s: %w", p.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// customHeaders lists tools (so the client knows which arguments the tools mirror into headers), then
// makes the calls the scenario's context names.
func customHeaders(ctx context.Context, r *Run) error {
	if _, err := r.allTools(ctx); err != nil {
		return err
	}
	calls, _ := r.Env.Data["toolCalls"].([]any)
	if len(calls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
	}
	var errs []error
	for _, c := range calls {
		call, _ := c.(map[string]any)
		name, _ := call["name"].(string)
		args, _ := call["arguments"].(map[string]any)
		if _, err := r.call(ctx, name, args); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// callSurvivors lists tools and calls each one the client kept: tools whose header annotations are invalid
// must not be offered (http-invalid-tool-headers).
func callSurvivors(ctx context.Context, r *Run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := r.call(ctx, t.Name, map[string]any{"region": "us-west1"}); err != nil {
			r.Logger.Warn("call failed", "tool", t.Name, "err", err)
		}
	}
	return nil
}

// echoSchema sends the input schema of json_schema_2020_12_tool, as the client surfaced it, back through
// json_schema_echo, so the suite sees which JSON Schema 2020-12 keywords survived.
func echoSchema(ctx context.Context, r *Run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(t *mcp.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		return errors.New("the server has no json_schema_2020_12_tool")
	}
	_, err = r.call(ctx, "json_schema_echo", map[string]any{"schema": tools[i].InputSchema})
	return err
}

// authScenario lists tools and calls test-tool, as the suite's auth scenarios expect of a client that
// completed authorization (the client authorized while opening the session, the host answering the browser
// step; step-up scenarios authorize again on the way).
func authScenario(ctx context.Context, r *Run) error {
	if _, err := r.allTools(ctx); err != nil {
		return err
	}
	_, err := r.call(ctx, "test-tool", nil)
	return err
}
