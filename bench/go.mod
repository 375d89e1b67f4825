module github.com/mcp-bridge/mcp-bridge/bench

go 1.26.8

require (
	github.com/mcp-bridge/mcp-bridge v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.32.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
)

// The harness uses the bridge's generated stubs and its stdio transport. Its direct client is the baseline, so it
// builds the stock go-sdk release: the bridge's replace of the SDK (third_party/) applies only in the main module.
replace github.com/mcp-bridge/mcp-bridge => ../
