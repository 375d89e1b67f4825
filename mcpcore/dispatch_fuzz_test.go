package mcpcore

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Fuzz targets for the validators of host input: elicitation content against a server's requestedSchema,
// and whole answers against their requests. Run with, e.g.:
//
//	go test ./mcpcore/ -run '^$' -fuzz FuzzElicitContent -fuzztime 1m
//	go test ./mcpcore/ -run '^$' -fuzz FuzzDispatchAnswer -fuzztime 1m

const fzPersonSchema = `{"type":"object","properties":{
	"name":{"type":"string","minLength":2,"maxLength":10},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"born":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"age":{"type":"integer","minimum":0,"maximum":150},
	"score":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},
	"ok":{"type":["boolean","null"]},
	"size":{"type":"string","enum":["s","m","l"],"enumNames":["S","M","L"]},
	"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
	"tags":{"type":"array","minItems":1,"maxItems":2,"uniqueItems":true,"items":{"type":"string","enum":["a","b"]}},
	"pets":{"type":"array","items":{"anyOf":[{"const":"cat","title":"Cat"}]}},
	"code":{"type":"string","pattern":"^[A-Z]{3}$","default":"ABC"}
},"required":["name"],"additionalProperties":false}`

func FuzzElicitContent(f *testing.F) {
	seeds := []struct{ schema, content string }{
		{fzPersonSchema, `{"name":"Ada","age":36,"email":"ada@example.com","tags":["a"]}`},
		{fzPersonSchema, `{"name":"A","age":36.5,"email":"nope","tags":["a","a"],"size":"xl","x":1}`},
		{fzPersonSchema, `{"name":null,"ok":null,"pets":"cat","score":1e308,"born":"2024-02-30"}`},
		{fzPersonSchema, `{"name":"Ada","at":"2025-01-02T03:04:05.123+01:00","site":"urn:x","color":"g","code":"abc"}`},
		{`{"type":"object","properties":{"n":{"type":"number","minimum":1}}}`, `{"n":1e400}`},
		{`{"type":"object","properties":{"v":{}}}`, `{"v":{"deep":[1,2,{"x":null}]}}`},
		{`{"type":"object","properties":{"r":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, `{"r":1}`},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"string"}}}}}`, `{"o":{"p":1}}`},
		{`{"type":"string"}`, `{}`},
		{`true`, `{"a":1}`},
		{`null`, `{}`},
		{`{"properties":{"a":{"type":"array","items":{"type":"integer"}}}}`, `{"a":[1,2.5,"x"]}`},
		{`{"type":"object","properties":{"m":{"type":"number","multipleOf":0}}}`, `{"m":3}`},
		// Two properties failing only in the library: found by the fuzzer when its message order varied.
		{`{"type":"object","properties":{"a":{"type":"stTing"},"b":{"type":"string","pattern":"^[A-Z]$"}}}`, `{"a":"0","b":"0"}`},
	}
	for _, s := range seeds {
		f.Add(s.schema, s.content)
	}
	f.Fuzz(func(t *testing.T, schemaJSON, contentJSON string) {
		var schema any
		if err := json.Unmarshal([]byte(schemaJSON), &schema); err != nil {
			return
		}
		var content map[string]any
		if err := json.Unmarshal([]byte(contentJSON), &content); err != nil {
			return
		}
		es, err := compileElicitSchema(schema)
		if err != nil {
			return
		}
		vs := es.validate(content)
		for _, v := range vs {
			if !strings.HasPrefix(v.Field, "content") || v.Description == "" {
				t.Fatalf("malformed violation %+v", v)
			}
		}
		// Deterministic: the same content gives the same violations (fields; a message about a root
		// keyword comes from the library, which may meet failures in another order).
		if again := es.validate(content); !slices.Equal(fzFields(vs), fzFields(again)) {
			t.Fatalf("violations differ between runs:\n%v\n%v", vs, again)
		}
		// The raw-JSON form of the schema compiles to the same validator. (Re-encoded: with duplicate keys
		// the raw text and the decoded map legitimately differ.)
		raw, err := json.Marshal(schema)
		if err != nil {
			t.Fatal(err)
		}
		es2, err := compileElicitSchema(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("raw schema does not compile: %v", err)
		}
		if got := es2.validate(content); !slices.Equal(fzFields(vs), fzFields(got)) {
			t.Fatalf("raw schema gives other violations:\n%v\n%v", vs, got)
		}
		// Numbers decoded as json.Number must not crash the validator either.
		dec := json.NewDecoder(strings.NewReader(contentJSON))
		dec.UseNumber()
		var numContent map[string]any
		if dec.Decode(&numContent) == nil {
			es.validate(numContent)
		}
	})
}

func fzFields(vs []FieldViolation) []string {
	var fs []string
	for _, v := range vs {
		fs = append(fs, v.Field)
	}
	return fs
}

// fzAnswer is the JSON form of an Answer the fuzzer mutates.
type fzAnswer struct {
	Sampling    *mcp.CreateMessageWithToolsResult `json:"sampling"`
	Elicitation *mcp.ElicitResult                 `json:"elicitation"`
	Roots       *mcp.ListRootsResult              `json:"roots"`
	Error       *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func FuzzDispatchAnswer(f *testing.F) {
	seeds := []struct {
		kind        uint8
		req, answer string
	}{
		{1, `{"maxTokens":10,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`,
			`{"sampling":{"role":"assistant","model":"m","content":{"type":"text","text":"hello"}}}`},
		{1, `{"maxTokens":10,"messages":[],"tools":[{"name":"w","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"}}`,
			`{"sampling":{"role":"assistant","model":"m","content":[{"type":"tool_use","id":"1","name":"w","input":{}},{"type":"text","text":"x"}]}}`},
		{1, `{"maxTokens":10,"messages":[],"tools":[{"name":"w","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"none"}}`,
			`{"sampling":{"role":"system","model":"","content":[{"type":"tool_use","name":"v"},{"type":"image","data":"","mimeType":""}]}}`},
		{1, `{}`, `{"error":{"code":-1,"message":"user rejected"}}`},
		{2, `{"mode":"form","message":"m","requestedSchema":` + fzPersonSchema + `}`,
			`{"elicitation":{"action":"accept","content":{"name":"Ada","age":3}}}`},
		{2, `{"mode":"form","message":"m","requestedSchema":` + fzPersonSchema + `}`,
			`{"elicitation":{"action":"accept"}}`},
		{2, `{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}`,
			`{"elicitation":{"action":"accept","content":{"a":1}}}`},
		{2, `{"message":"m"}`, `{"elicitation":{"action":"maybe"},"roots":{"roots":[]}}`},
		{3, `{}`, `{"roots":{"roots":[{"uri":"file:///a"},{"uri":"http://b"},{"uri":"file://%zz"}]}}`},
		{3, `{}`, `{"sampling":{"role":"assistant","model":"m","content":{"type":"text","text":""}}}`},
		{3, `{}`, `{}`},
	}
	for _, s := range seeds {
		f.Add(s.kind, s.req, s.answer)
	}
	d := newDispatcher(nil, PendingPolicy{}, Limits{}, nil)
	f.Fuzz(func(t *testing.T, kind uint8, reqJSON, answerJSON string) {
		req := &PendingRequest{ID: "req-fuzz", Owner: "o", SessionID: "s", Kind: RequestKind(kind%3 + 1)}
		switch req.Kind {
		case KindSampling:
			req.Sampling = &mcp.CreateMessageWithToolsParams{}
			if json.Unmarshal([]byte(reqJSON), req.Sampling) != nil {
				return
			}
		case KindElicitation:
			req.Elicitation = &mcp.ElicitParams{}
			if json.Unmarshal([]byte(reqJSON), req.Elicitation) != nil {
				return
			}
		case KindRoots:
			req.Roots = &mcp.ListRootsParams{}
		}
		var fa fzAnswer
		if json.Unmarshal([]byte(answerJSON), &fa) != nil {
			return
		}
		a := Answer{Sampling: fa.Sampling, Elicitation: fa.Elicitation, Roots: fa.Roots}
		if fa.Error != nil {
			a.Error = &RPCError{Code: fa.Error.Code, Message: fa.Error.Message}
		}
		err := d.validateAnswer(&pendingEntry{req: req}, a)
		var ie *InvalidError
		switch {
		case err == nil:
			// An accepted answer must be sendable upstream.
			var v any
			switch {
			case a.Sampling != nil:
				v = a.Sampling
			case a.Elicitation != nil:
				v = a.Elicitation
			case a.Roots != nil:
				v = a.Roots
			case a.Error != nil:
				v = a.Error
			default:
				t.Fatal("an answer with nothing set was accepted")
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("accepted answer does not marshal: %v", err)
			}
		case errors.As(err, &ie):
			if !errors.Is(err, ErrInvalidAnswer) || len(ie.Violations) == 0 {
				t.Fatalf("InvalidError without ErrInvalidAnswer or violations: %v", err)
			}
			for _, v := range ie.Violations {
				if v.Field == "" || v.Description == "" {
					t.Fatalf("malformed violation %+v", v)
				}
			}
		case errors.Is(err, ErrWrongAnswerKind):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
