package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int // 0: the code's standard mapping
	}{
		{"wrong-shape result", toStatus(fmt.Errorf("%w: the server's response to tools/call", mcpcore.ErrBadMessage)), http.StatusBadGateway},
		{"the bridge's own internal error", toStatus(errors.New("secret detail")), 0},
		{"upstream unavailable", toStatus(mcpcore.ErrUnavailable), 0},
		{"not a status", errors.New("plain"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ok := HTTPStatus(tc.err)
			if ok != (tc.code != 0) || code != tc.code {
				t.Errorf("HTTPStatus = %d, %v; want %d", code, ok, tc.code)
			}
		})
	}
}

// TestOneFileBuildsStatuses: every gRPC status the service returns is built in server/errors.go. No other
// non-test file of the module's service packages calls grpc's status constructors or builds a
// google.rpc.ErrorInfo (docs/adr/0102).
func TestOneFileBuildsStatuses(t *testing.T) {
	builders := map[string]bool{"Error": true, "Errorf": true, "New": true, "Newf": true, "FromProto": true, "FromContextError": true}
	var found []string
	for _, dir := range []string{".", "gateway", "healthz", "../mcpcore", "../cmd/mcp-bridge", "../internal"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			if filepath.Clean(path) == "errors.go" {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			statusName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"google.golang.org/grpc/status"` {
					statusName = "status"
					if imp.Name != nil {
						statusName = imp.Name.Name
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && statusName != "" && x.Name == statusName && builders[n.Sel.Name] {
						found = append(found, path+": status."+n.Sel.Name)
					}
				case *ast.CompositeLit: // reading an ErrorInfo (a type assertion) is fine; only a literal builds one
					if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "ErrorInfo" {
						found = append(found, path+": errdetails.ErrorInfo{}")
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "withDetails" {
						found = append(found, path+": withDetails")
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) > 0 {
		t.Errorf("statuses built outside server/errors.go:\n%s", strings.Join(found, "\n"))
	}
}

// TestResourceStatus: a missing resource is NOT_FOUND in both protocol eras, told by the JSON-RPC code and
// the error's data, never by its message (docs/adr/0102).
func TestResourceStatus(t *testing.T) {
	const uri = "file:///missing.txt"
	for _, tc := range []struct {
		name string
		err  error
		want codes.Code
	}{
		{"-32002 (before SEP-2164)", upstream(&jsonrpc.Error{Code: -32002, Message: "Resource not found"}), codes.NotFound},
		{"-32602 naming the uri", upstream(&jsonrpc.Error{Code: -32602, Message: "no such thing", Data: json.RawMessage(`{"uri":"` + uri + `"}`)}), codes.NotFound},
		{"-32602 naming another uri", upstream(&jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(`{"uri":"file:///other"}`)}), codes.InvalidArgument},
		{"-32602 whose message says not found", upstream(&jsonrpc.Error{Code: -32602, Message: "Resource " + uri + " not found"}), codes.InvalidArgument},
		{"-32602 with other data", upstream(&jsonrpc.Error{Code: -32602, Message: "bad uri", Data: json.RawMessage(`["x"]`)}), codes.InvalidArgument},
		{"the bridge's own", mcpcore.ErrUnavailable, codes.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status.Convert(resourceStatus(tc.err, uri))
			if st.Code() != tc.want {
				t.Errorf("code %v, want %v", st.Code(), tc.want)
			}
			if info := errorInfo(st.Details()); tc.want != codes.Unavailable && info.GetMetadata()[MetaJSONRPCCode] == "" {
				t.Errorf("ErrorInfo %v lost the upstream error", info)
			}
		})
	}
}

// TestReplicaStatus: the ownership refusals keep their code, reason, message and metadata.
func TestReplicaStatus(t *testing.T) {
	for _, tc := range []struct {
		err    *ownership.Error
		reason string
		md     map[string]string
	}{
		{&ownership.Error{Err: ownership.ErrWrongReplica, Message: "m1", Metadata: map[string]string{"owner": "a", "replica": "b"}}, ReasonWrongReplica, map[string]string{"owner": "a", "replica": "b"}},
		{&ownership.Error{Err: ownership.ErrMoved, Message: "m2", Metadata: map[string]string{"session": "s-b.1", "replica": "b"}}, ReasonSessionMoved, map[string]string{"session": "s-b.1", "replica": "b"}},
		{&ownership.Error{Err: ownership.ErrStoreUnavailable, Message: "m3"}, ReasonStateStoreUnavailable, nil},
	} {
		st := status.Convert(toStatus(tc.err))
		info := errorInfo(st.Details())
		if st.Code() != codes.Unavailable || st.Message() != tc.err.Message || info.GetReason() != tc.reason || !maps.Equal(info.GetMetadata(), tc.md) {
			t.Errorf("%v → %v %q %v", tc.err.Err, st.Code(), st.Message(), info)
		}
	}
}

// TestStatusAndMetricLabelAgree: one classifier (mcpcore.Classify) feeds both the status a host gets and
// the metric label (mcpcore.ErrorType). For every class, alone and wrapped with any other, the label and the
// reason come from the same class; every class has its own label, and every class but those the service
// never returns has its own row.
func TestStatusAndMetricLabelAgree(t *testing.T) {
	classes := mcpcore.Classes()
	labelReason := map[string]string{}
	reasonLabel := map[string]string{}
	check := func(err error) {
		t.Helper()
		class := mcpcore.Classify(err)
		label := mcpcore.ErrorType(err)
		reason := errorInfo(status.Convert(toStatus(err)).Details()).GetReason()
		if class == nil || label == mcpcore.OtherValue || label == "" {
			t.Errorf("%v: class %v, label %q", err, class, label)
			return
		}
		if want := mcpcore.ErrorType(class); label != want {
			t.Errorf("%v: label %q, its class %v's is %q", err, label, class, want)
		}
		if want := errorInfo(status.Convert(toStatus(class)).Details()).GetReason(); reason != want {
			t.Errorf("%v: reason %q, its class %v's is %q", err, reason, class, want)
		}
		if r, ok := labelReason[label]; ok && r != reason {
			t.Errorf("label %q has reasons %q and %q", label, r, reason)
		}
		labelReason[label] = reason
		if l, ok := reasonLabel[reason]; ok && l != label && reason != ReasonInternal {
			t.Errorf("reason %q has labels %q and %q", reason, l, label)
		}
		reasonLabel[reason] = label
	}
	for _, a := range classes {
		check(a)
		check(fmt.Errorf("context: %w", a))
		if _, ok := classStatus[a]; !ok && a != mcpcore.ErrTaskCreated {
			t.Errorf("class %v has no status row", a)
		}
		for _, b := range classes {
			check(fmt.Errorf("%w: %w", a, b))
		}
	}
	for c := range classStatus {
		if !slices.Contains(classes, c) {
			t.Errorf("status row for %v, which is no class", c)
		}
	}
}

// TestReasonsAreTheProtoEnum: the Reason constants of errors.go are exactly the values of the proto enum
// mcpbridge.v1.Reason, from which the clients' constants are generated (docs/adr/0102).
func TestReasonsAreTheProtoEnum(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && strings.HasPrefix(vs.Names[0].Name, "Reason") && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				got[v] = true
			}
		}
		return true
	})
	want := map[string]bool{}
	for name, n := range pb.Reason_value {
		if n != 0 {
			want[name] = true
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("errors.go's reasons %v\nproto enum mcpbridge.v1.Reason %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}

// TestRetryAfterGivesRetryInfo: an error after which the server said when to retry keeps its class's code
// and reason, and carries the delay as google.rpc.RetryInfo (the gateway's Retry-After).
func TestRetryAfterGivesRetryInfo(t *testing.T) {
	plain := fmt.Errorf("%w: rejected by transport", mcpcore.ErrUnavailable)
	st := status.Convert(toStatus(&mcpcore.RetryAfterError{Err: plain, After: 7 * time.Second}))
	base := status.Convert(toStatus(plain))
	reasonOf := func(st *status.Status) string {
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
		return ""
	}
	if st.Code() != base.Code() || reasonOf(st) == "" || reasonOf(st) != reasonOf(base) {
		t.Errorf("status %v %s, want %v %s as without the delay", st.Code(), reasonOf(st), base.Code(), reasonOf(base))
	}
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retry = ri
		}
	}
	if retry.GetRetryDelay().AsDuration() != 7*time.Second {
		t.Errorf("RetryInfo = %v, want 7s", retry)
	}
	for _, d := range base.Details() {
		if _, ok := d.(*errdetails.RetryInfo); ok {
			t.Error("RetryInfo on an error that says nothing of when to retry")
		}
	}
}
