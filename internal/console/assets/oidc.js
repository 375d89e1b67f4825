// Sign-in at the OpenID Connect identity provider the bridge trusts (auth.oidc), when the operator registered
// the console there (console.oidc): the authorization code flow with PKCE (RFC 7636) of a public client, as
// any single-page app does it. The token the provider returns is used like a pasted one: kept in
// sessionStorage, sent only as the Authorization header. The code verifier, state and nonce live in
// sessionStorage between leaving for the provider and coming back, and are removed at once.

const KEY = 'mcp-bridge-console.oidc';

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function random() { return base64url(crypto.getRandomValues(new Uint8Array(32))); }

function redirectURI() { return `${location.origin}/console/`; }

async function discover(issuer) {
  const resp = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, { cache: 'no-store' });
  if (!resp.ok) throw new Error(`the identity provider's discovery document: HTTP ${resp.status}`);
  const doc = await resp.json();
  if (doc.issuer !== issuer) throw new Error(`the identity provider calls itself ${doc.issuer}, not ${issuer}`);
  return doc;
}

// signIn leaves for the provider's authorization endpoint.
export async function signIn(cfg) {
  const doc = await discover(cfg.issuer);
  const verifier = random();
  const state = random();
  const nonce = random();
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(KEY, JSON.stringify({ verifier, state, nonce, hash: location.hash }));
  const u = new URL(doc.authorization_endpoint);
  for (const [k, v] of Object.entries({
    response_type: 'code', client_id: cfg.clientID, redirect_uri: redirectURI(), scope: cfg.scopes.join(' '),
    state, nonce, code_challenge: challenge, code_challenge_method: 'S256',
  })) u.searchParams.set(k, v);
  location.assign(u.href);
}

// payload decodes a JWT's claims without checking them: the bridge checks the signature; the page only reads
// the nonce the provider echoed, and the claim that names the principal, for display.
export function payload(jwt) {
  try {
    return JSON.parse(atob(jwt.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')));
  } catch {
    return {};
  }
}

// finishSignIn completes a sign-in when the page is the provider's redirect back (?code=…&state=…): it
// removes the parameters from the address bar, checks the state, exchanges the code and returns the token.
// It returns null when the page is not such a redirect.
export async function finishSignIn(cfg) {
  const q = new URLSearchParams(location.search);
  if (!q.has('state')) return null;
  const saved = JSON.parse(sessionStorage.getItem(KEY) || 'null');
  sessionStorage.removeItem(KEY);
  history.replaceState(null, '', `/console/${(saved && saved.hash) || ''}`);
  if (!saved || q.get('state') !== saved.state) throw new Error('the sign-in answer is not for this tab (state does not match)');
  if (q.get('error')) throw new Error(`sign-in failed: ${q.get('error')} ${q.get('error_description') || ''}`);
  const doc = await discover(cfg.issuer);
  const resp = await fetch(doc.token_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: q.get('code') || '', redirect_uri: redirectURI(), client_id: cfg.clientID,
      code_verifier: saved.verifier,
    }),
    cache: 'no-store',
  });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(`the identity provider refused the code: ${body.error || resp.status} ${body.error_description || ''}`);
  if (body.id_token && payload(body.id_token).nonce !== saved.nonce) throw new Error('the ID token is not for this sign-in (nonce does not match)');
  const token = body[cfg.token];
  if (!token) throw new Error(`the identity provider sent no ${cfg.token}`);
  return token;
}
