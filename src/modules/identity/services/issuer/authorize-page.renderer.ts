/**
 * The server-rendered pages of GET/POST /authorize: sign-in, second step, consent and errors. Plain HTML
 * with inline styles, no scripts; every value is escaped.
 *
 * Forms post back to the page's own URL unless `action` is given: pages shown by the third-party callback
 * (another URL) post to the authorization endpoint.
 */

const SCOPE_TEXT: Record<string, string> = {
  'doc:read': 'Read document properties, metadata, views and settings',
  'doc:write': 'Create, update and delete documents and metadata',
  'data:read': 'Query rows',
  'data:write': 'Create, update and delete rows',
  'views:manage': 'Create, update and delete views',
  'comments:write': 'Create, update and delete comments',
  'approvals:manage': 'Start and process approvals',
  'requests:manage': 'Create, merge and close change requests',
  'webhooks:manage': 'Create, update and delete webhooks',
  openid: 'Know who you are',
  profile: 'See your name and profile picture',
  email: 'See your e-mail address',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Quire</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; }
  main { max-width: 380px; margin: 8vh auto; background: #fff; border-radius: 8px; padding: 28px 32px; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
  h1 { font-size: 1.25rem; margin: 0 0 1rem; }
  label { display: block; margin: .75rem 0 .25rem; font-size: .9rem; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem; }
  button { margin-top: 1.25rem; padding: .55rem 1.1rem; font-size: 1rem; cursor: pointer; }
  .error { color: #b00020; background: #fdecee; padding: .5rem .75rem; border-radius: 4px; }
  .muted { color: #555; font-size: .9rem; }
  ul { padding-left: 1.2rem; }
  .providers { margin-top: 1.5rem; border-top: 1px solid #ddd; }
  .providers button { display: block; width: 100%; margin-top: .75rem; }
</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

function formTag(action?: string, extra = ''): string {
  const target = action === undefined ? '' : ` action="${escapeHtml(action)}"`;
  return `<form method="post"${target}${extra}>`;
}

function errorBox(error?: string): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
}

/** A third-party provider the sign-in page offers. */
export interface SignInProvider {
  provider: string;
  displayName: string;
}

/** One button per enabled provider; choosing one posts step `third_party`, answered by a redirect to the provider. */
function providerForm(requestToken: string, providers: SignInProvider[], action?: string): string {
  if (providers.length === 0) {
    return '';
  }
  const buttons = providers
    .map(
      (p) =>
        `<button type="submit" name="provider" value="${escapeHtml(p.provider)}" id="provider-${escapeHtml(p.provider)}">Sign in with ${escapeHtml(p.displayName)}</button>`,
    )
    .join('\n  ');
  return `
${formTag(action, ' class="providers" id="third-party"')}
  ${hidden('step', 'third_party')}
  ${hidden('request', requestToken)}
  ${buttons}
</form>`;
}

export function signInPage(input: {
  requestToken: string;
  clientName: string;
  email?: string;
  error?: string;
  providers?: SignInProvider[];
  action?: string;
}): string {
  return layout(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>
${errorBox(input.error)}
${formTag(input.action, ' autocomplete="on"')}
  ${hidden('step', 'login')}
  ${hidden('request', input.requestToken)}
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" required autocomplete="username" value="${escapeHtml(input.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" required autocomplete="current-password">
  <button type="submit">Sign in</button>
</form>${providerForm(input.requestToken, input.providers ?? [], input.action)}`,
  );
}

export function twoFactorPage(input: {
  requestToken: string;
  challengeToken: string;
  methods: string[];
  destination?: string;
  error?: string;
  action?: string;
}): string {
  const hint = input.methods.includes('totp')
    ? 'Enter the code from your authenticator app, or a backup code.'
    : `Enter the code we sent to ${escapeHtml(input.destination ?? 'you')}, or a backup code.`;
  return layout(
    'Two-step verification',
    `<h1>Two-step verification</h1>
${errorBox(input.error)}
<p class="muted">${hint}</p>
${formTag(input.action)}
  ${hidden('step', 'two_factor')}
  ${hidden('request', input.requestToken)}
  ${hidden('challenge', input.challengeToken)}
  <label for="code">Code</label>
  <input id="code" name="code" required autocomplete="one-time-code" inputmode="text">
  <button type="submit">Verify</button>
</form>`,
  );
}

export function consentPage(input: {
  requestToken: string;
  consentToken: string;
  clientName: string;
  userEmail: string;
  scopes: string[];
  action?: string;
}): string {
  const items = input.scopes
    .map((scope) => `<li><code>${escapeHtml(scope)}</code> — ${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`)
    .join('\n    ');
  return layout(
    'Authorize',
    `<h1>${escapeHtml(input.clientName)} wants to access your Quire account</h1>
<p class="muted">Signed in as ${escapeHtml(input.userEmail)}</p>
<p>It will be able to:</p>
<ul id="scopes">
    ${items || '<li>Nothing beyond knowing that you approved it</li>'}
</ul>
${formTag(input.action)}
  ${hidden('step', 'consent')}
  ${hidden('request', input.requestToken)}
  ${hidden('consent', input.consentToken)}
  <button type="submit" name="decision" value="approve" id="approve">Allow</button>
  <button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>`,
  );
}
