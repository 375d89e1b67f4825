package e2e

import (
	"net/http"
	"strings"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// What an accepted form elicitation delivers, on both eras (docs/adr/0007-elicitation-content.md): the
// host's content with the schema's defaults filled in for the properties it omitted, by the bridge, before
// validation; a property outside the requested schema is refused with INVALID_ARGUMENT naming the field.
func TestAcceptedElicitationContent(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			sid, _ := r.must("POST", "/v1/sessions", `{"server": "`+v.server+`", `+allCapsJSON+`}`)["sessionId"].(string)
			ev := r.events(sid)
			done := r.async("POST", "/v1/sessions/"+sid+"/tools/elicit_content:call", `{}`)
			rid := ev.next(func(e *pb.Event) bool { return e.GetServerRequest() != nil }).GetServerRequest().GetRequestId()
			respond := "/v1/sessions/" + sid + "/requests/" + rid + ":respond"

			code, body := r.do("POST", respond, `{"elicitation": {"action": "ELICIT_ACTION_ACCEPT", "content": {"name": "Ada", "nickname": "ada"}}}`)
			if code != http.StatusBadRequest || !strings.Contains(compact(body), `"field":"answer.elicitation.content.nickname"`) {
				t.Errorf("content with a property outside the schema = %d %s; want 400 naming answer.elicitation.content.nickname", code, compact(body))
			}
			// count is required but has a default: the host may omit it.
			r.must("POST", respond, `{"elicitation": {"action": "ELICIT_ACTION_ACCEPT", "content": {"name": "Ada"}}}`)
			res := await(t, done)
			got, _ := jsonPath(res, "result", "content", 0, "text", "text").(string)
			if want := `{"action":"accept","content":{"color":"blue","count":3,"name":"Ada"}}`; got != want {
				t.Errorf("the server received %s, want %s (full result %s)", got, want, compact(res))
			}
		})
	}
}
