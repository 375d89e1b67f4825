package upstreamauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// DPoP (RFC 9449; MCP extension io.modelcontextprotocol/auth/dpop, SEP-1932): a server's Config.DPoP
// makes its flow hold an ES256 key (dpopKey) and
//
//   - sign a proof into every token request its flows make — authorization code, refresh, client
//     credentials, JWT bearer — so the authorization server binds the token to the key (cnf.jkt); the
//     token exchange at an enterprise IdP gets none (the ID-JAG is not a DPoP-bound token);
//   - present a DPoP-bound token (token_type DPoP) to the MCP server with the DPoP scheme and a fresh
//     proof (new jti, htm, htu, ath) on every request; a token the server issued as Bearer is sent as
//     before;
//   - answer a use_dpop_nonce challenge — 400 from the token endpoint, 401 from the MCP server — with one
//     retry carrying the server's DPoP-Nonce, and keep each server's latest nonce for later proofs.
//
// The token side wraps the OAuth HTTP client (dpopTokenTransport); the resource side wraps the session's
// HTTP transport (the transport serverAuth.Connect returns).

// dpopState is a flow's DPoP key and the nonces its servers gave.
type dpopState struct {
	key *dpopKey

	mu     sync.Mutex        // guards nonces and bound
	nonces map[string]string // origin (scheme://host) → the latest DPoP-Nonce it sent
	bound  map[[32]byte]bool // SHA-256 of the access tokens issued as DPoP-bound (the latest few)
}

// maxBoundTokens bounds dpopState.bound: tokens are replaced on refresh and re-authorization.
const maxBoundTokens = 16

// bind records that the authorization server issued tok as a DPoP-bound token.
func (d *dpopState) bind(tok string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.bound) >= maxBoundTokens {
		clear(d.bound)
	}
	d.bound[sha256.Sum256([]byte(tok))] = true
}

// isBound reports whether tok was issued as a DPoP-bound token.
func (d *dpopState) isBound(tok string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bound[sha256.Sum256([]byte(tok))]
}

func newDPoPState() (*dpopState, error) {
	k, err := newDPoPKey()
	if err != nil {
		return nil, fmt.Errorf("%w: DPoP key: %w", mcpcore.ErrAuthorization, err)
	}
	return &dpopState{key: k, nonces: map[string]string{}, bound: map[[32]byte]bool{}}, nil
}

func urlOrigin(u *url.URL) string { return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) }

func (d *dpopState) nonce(u *url.URL) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[urlOrigin(u)]
}

// remember keeps the nonce resp carries, if any, and reports whether it carried one.
func (d *dpopState) remember(u *url.URL, resp *http.Response) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	d.mu.Lock()
	d.nonces[urlOrigin(u)] = n
	d.mu.Unlock()
	return true
}

// maxReplayBody bounds the request bodies kept for a nonce retry (token requests, MCP messages; the
// session's own frame limit applies upstream of this).
const maxReplayBody = 64 << 20

// bufferBody reads req's body so it can be sent twice; nil for a request without one.
func bufferBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxReplayBody+1))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(b) > maxReplayBody {
		return nil, fmt.Errorf("request body over %d bytes", maxReplayBody)
	}
	return b, nil
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return r
}

// dpopTokenTransport adds a DPoP proof to the token requests of a flow's OAuth HTTP client.
type dpopTokenTransport struct {
	base http.RoundTripper
	dpop *dpopState
}

func (t *dpopTokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.base.RoundTrip(req)
	}
	body, err := bufferBody(req)
	if err != nil {
		return nil, err
	}
	form, _ := url.ParseQuery(string(body))
	if gt := form.Get("grant_type"); gt == "" || gt == grantTypeTokenExchange {
		return t.base.RoundTrip(withBody(req, body))
	}
	for attempt := 0; ; attempt++ {
		r := withBody(req, body)
		proof, err := t.dpop.key.proof(http.MethodPost, req.URL.String(), "", t.dpop.nonce(req.URL), time.Now())
		if err != nil {
			return nil, fmt.Errorf("DPoP proof: %w", err)
		}
		r.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		fresh := t.dpop.remember(req.URL, resp)
		if attempt == 0 && fresh && resp.StatusCode == http.StatusBadRequest && isUseDPoPNonceBody(resp) {
			continue // RFC 9449 §8: retry with the authorization server's nonce
		}
		if resp.StatusCode == http.StatusOK {
			t.noteBinding(resp)
		}
		return resp, nil
	}
}

// noteBinding reads a token response and records its access token as DPoP-bound when its token_type is
// DPoP (RFC 9449 §5); the body stays readable, whole, for the flow.
func (t *dpopTokenTransport) noteBinding(resp *http.Response) {
	b, err := peekBody(resp, maxTokenResponse)
	if err != nil {
		return
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if json.Unmarshal(b, &tr) == nil && tr.AccessToken != "" && strings.EqualFold(tr.TokenType, "DPoP") {
		t.dpop.bind(tr.AccessToken)
	}
}

// isUseDPoPNonceBody reports whether a token endpoint's error response is use_dpop_nonce. It closes the
// body when it is; otherwise the body is left readable, whole.
func isUseDPoPNonceBody(resp *http.Response) bool {
	b, err := peekBody(resp, 64<<10)
	var e struct {
		Error string `json:"error"`
	}
	if err == nil && json.Unmarshal(b, &e) == nil && e.Error == "use_dpop_nonce" {
		drain(resp)
		return true
	}
	return false
}

// peekBody reads up to max bytes of resp's body and puts them back in front of the rest.
func peekBody(resp *http.Response, max int64) ([]byte, error) {
	orig := resp.Body
	b, err := io.ReadAll(io.LimitReader(orig, max))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), orig), orig}
	return b, err
}

// dpopResourceTransport presents a flow's DPoP-bound tokens to the MCP server (RFC 9449 §7): the SDK's
// transport sets "Authorization: Bearer <token>"; for a token the authorization server issued as DPoP the
// scheme becomes DPoP and a fresh proof bound to the token goes with the request.
type dpopResourceTransport struct {
	base http.RoundTripper
	dpop *dpopState
}

func (t *dpopResourceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	d := t.dpop
	if !ok || tok == "" || !d.isBound(tok) {
		return t.base.RoundTrip(req)
	}
	body, err := bufferBody(req)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		r := withBody(req, body)
		proof, err := d.key.proof(req.Method, req.URL.String(), tok, d.nonce(req.URL), time.Now())
		if err != nil {
			return nil, fmt.Errorf("DPoP proof: %w", err)
		}
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		fresh := d.remember(req.URL, resp)
		if attempt == 0 && fresh && resp.StatusCode == http.StatusUnauthorized && isUseDPoPNonceChallenge(resp) {
			drain(resp)
			continue // RFC 9449 §9: retry with the resource server's nonce
		}
		return resp, nil
	}
}

// isUseDPoPNonceChallenge reports whether a 401's WWW-Authenticate is a DPoP challenge with error
// use_dpop_nonce.
func isUseDPoPNonceChallenge(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "dpop") && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}
