package demoserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	greetPrompt      = "greet"
	defaultGreetTone = "casual"
)

var (
	greetNames  = []string{"Ada", "Alan", "Barbara", "Edsger", "Grace", "Ken", "Linus", "Margaret", "Rob"}
	greetStyles = []string{"casual", "formal", "pirate"}
)

func (d *demo) addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        greetPrompt,
		Title:       "Greeting",
		Description: "Asks the model to greet someone in a given style.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: "who to greet", Required: true},
			{Name: "style", Title: "Style", Description: "casual (default), formal or pirate"},
		},
	}, d.greet)
}

func (d *demo) greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := strings.TrimSpace(req.Params.Arguments["name"])
	if name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing required argument "name"`}
	}
	style := req.Params.Arguments["style"]
	if style == "" {
		style = defaultGreetTone
	}
	if !slices.Contains(greetStyles, style) {
		return nil, &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("style %q is not one of %s", style, strings.Join(greetStyles, ", ")),
		}
	}
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("A %s greeting for %s", style, name),
		Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: fmt.Sprintf("Write a short %s greeting for %s.", style, name)},
		}},
	}, nil
}

// complete offers values for the greet prompt's arguments and for the id variable of the items
// template, filtered by case-insensitive prefix (MCP spec "Server utilities: Completion").
// Anything else completes to nothing.
func (d *demo) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var candidates []string
	ref, arg := req.Params.Ref, req.Params.Argument
	switch {
	case ref.Type == "ref/prompt" && ref.Name == greetPrompt && arg.Name == "name":
		candidates = greetNames
	case ref.Type == "ref/prompt" && ref.Name == greetPrompt && arg.Name == "style":
		candidates = greetStyles
	case ref.Type == "ref/resource" && ref.URI == itemsTemplate && arg.Name == "id":
		candidates = itemIDs()
	}
	values := []string{}
	prefix := strings.ToLower(arg.Value)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			values = append(values, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
