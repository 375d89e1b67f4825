package mcpcore

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaTaskSupport is the private _meta key under which the wire tap keeps a listed tool's
// execution.taskSupport (MCP 2025-11-25 Tool.execution), which go-sdk v1.8.0's Tool type has no field for;
// ToolTaskSupport reads it and hands out the tool's _meta without it.
const metaTaskSupport = "mcp-bridge.internal/taskSupport"

// carryToolExecution returns a tools/list result with each tool's execution.taskSupport copied into its
// _meta[metaTaskSupport], and whether it changed anything.
func carryToolExecution(result json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return nil, false
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(obj["tools"], &tools) != nil {
		return nil, false
	}
	changed := false
	for i, t := range tools {
		var exec struct {
			TaskSupport string `json:"taskSupport"`
		}
		if raw, ok := t["execution"]; !ok || json.Unmarshal(raw, &exec) != nil || exec.TaskSupport == "" {
			continue
		}
		meta, err := setParam(t["_meta"], metaTaskSupport, exec.TaskSupport)
		if err != nil {
			continue
		}
		tools[i]["_meta"] = meta
		changed = true
	}
	if !changed {
		return nil, false
	}
	raw, err := json.Marshal(tools)
	if err != nil {
		return nil, false
	}
	obj["tools"] = raw
	out, err := json.Marshal(obj)
	return out, err == nil
}

// hasToolExecution is a cheap pre-check for carryToolExecution.
func hasToolExecution(result json.RawMessage) bool {
	return bytes.Contains(result, []byte(`"taskSupport"`))
}

// ToolTaskSupport returns a listed tool's execution.taskSupport ("forbidden", "optional" or "required"; ""
// when the server did not say) and the tool's _meta without the core's private key. Tools from
// Session.ListTools carry it; the SDK's Tool type cannot.
func ToolTaskSupport(t *mcp.Tool) (taskSupport string, meta mcp.Meta) {
	if t == nil {
		return "", nil
	}
	v, ok := t.Meta[metaTaskSupport]
	if !ok {
		return "", t.Meta
	}
	taskSupport, _ = v.(string)
	meta = maps.Clone(t.Meta)
	delete(meta, metaTaskSupport)
	if len(meta) == 0 {
		meta = nil
	}
	return taskSupport, meta
}
