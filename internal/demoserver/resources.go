package demoserver

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	readmeURI     = "demo://readme"
	counterURI    = "demo://counter"
	itemsTemplate = "demo://items/{id}"
	itemsPrefix   = "demo://items/"
	readmeText    = "# mcp-bridge demo server\n\nThis server exists to exercise every MCP feature a client meets. Call its tools, read demo://counter after calling increment (or subscribe to it), read demo://items/{id} for one of alpha, beta, gamma, delta, epsilon, and get the greet prompt.\n"
)

// item is what demo://items/{id} returns, as JSON.
type item struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

var items = map[string]item{
	"alpha":   {ID: "alpha", Title: "Alpha", Description: "the first item"},
	"beta":    {ID: "beta", Title: "Beta", Description: "the second item"},
	"gamma":   {ID: "gamma", Title: "Gamma", Description: "the third item"},
	"delta":   {ID: "delta", Title: "Delta", Description: "the fourth item"},
	"epsilon": {ID: "epsilon", Title: "Epsilon", Description: "the fifth item"},
}

func itemIDs() []string {
	ids := make([]string, 0, len(items))
	for id := range items {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (d *demo) addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI:         readmeURI,
		Name:        "readme",
		Title:       "About the demo server",
		Description: "What the demo server offers.",
		MIMEType:    "text/markdown",
		Size:        int64(len(readmeText)),
	}, d.readReadme)
	s.AddResource(&mcp.Resource{
		URI:         counterURI,
		Name:        "counter",
		Title:       "Counter",
		Description: "A number the increment tool raises; subscribe to be told when it changes.",
		MIMEType:    "text/plain",
	}, d.readCounter)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: itemsTemplate,
		Name:        "item",
		Title:       "Demo item",
		Description: "One demo item as JSON; id is one of alpha, beta, gamma, delta, epsilon (completion offers them).",
		MIMEType:    "application/json",
	}, d.readItem)
}

func (d *demo) readReadme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/markdown", Text: readmeText},
	}}, nil
}

func (d *demo) readCounter(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	d.mu.Lock()
	n := d.counter
	d.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/plain", Text: strconv.Itoa(n)},
	}}, nil
}

func (d *demo) readItem(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	it, ok := items[strings.TrimPrefix(req.Params.URI, itemsPrefix)]
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	data, err := json.Marshal(it)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)},
	}}, nil
}

// knownResource reports whether uri names one of the server's resources.
func knownResource(uri string) bool {
	if uri == readmeURI || uri == counterURI {
		return true
	}
	_, ok := items[strings.TrimPrefix(uri, itemsPrefix)]
	return strings.HasPrefix(uri, itemsPrefix) && ok
}

// subscribe accepts subscriptions to the server's own resources; the SDK keeps the subscriber
// list and Server.ResourceUpdated notifies it (MCP spec "Server features: Resources,
// Subscriptions").
func (d *demo) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if !knownResource(req.Params.URI) {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	d.logger.Debug("resource subscribed", "uri", req.Params.URI)
	return nil
}

func (d *demo) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	d.logger.Debug("resource unsubscribed", "uri", req.Params.URI)
	return nil
}
