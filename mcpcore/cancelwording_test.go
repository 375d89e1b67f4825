package mcpcore

import (
	"context"
	"errors"
	"testing"
)

// The error answer of a cancelled server request says who cancelled it.
func TestCancelledRequestSaysWhoCancelled(t *testing.T) {
	tests := []struct {
		name    string
		cancel  func(h *dtHarness, id string, stop context.CancelCauseFunc)
		outcome Outcome
		want    string
	}{
		{"host cancels the request", func(h *dtHarness, id string, _ context.CancelCauseFunc) {
			if err := h.d.Cancel("o", id, "user went away"); err != nil {
				t.Fatal(err)
			}
		}, OutcomeCancelledByHost, "request cancelled by host: user went away"},
		{"client's call ends", func(_ *dtHarness, _ string, stop context.CancelCauseFunc) { stop(errCallEnded) }, OutcomeCallEnded, "request cancelled by client: the call it belongs to ended"},
		{"server cancels", func(_ *dtHarness, _ string, stop context.CancelCauseFunc) {
			stop(errors.New("notifications/cancelled"))
		}, OutcomeCancelledByServer, "request cancelled by server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			id, res := h.start(ctx, dtSamplingReq("o", "s"), nil)
			tc.cancel(h, id, stop)
			r := dtWait(t, res)
			if r.outcome != tc.outcome || r.answer.Error == nil || r.answer.Error.Code != CodeRequestCancelled || r.answer.Error.Message != tc.want {
				t.Errorf("submit = %v, %+v; want %v with %q", r.outcome, r.answer.Error, tc.outcome, tc.want)
			}
		})
	}
}
