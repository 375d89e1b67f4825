//go:build tools

// Package deps pins module dependencies before the code that uses them lands.
package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "go.uber.org/goleak"
	_ "go.yaml.in/yaml/v3"
	_ "google.golang.org/genproto/googleapis/api/annotations"
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
	_ "google.golang.org/grpc"
	_ "google.golang.org/protobuf/proto"
)
