// SPDX-License-Identifier: Apache-2.0
// The dashboard's API token, for a vigil-fleet started with --token-file. The token lives in
// sessionStorage (gone when the tab closes) and is sent as "Authorization: Bearer". A link may carry
// it in the fragment (#token=...), which never reaches the server or its logs; it is moved to
// storage and removed from the address bar at once.
import { h } from './dom.js';

const KEY = 'vigil-fleet-token';

export function takeTokenFromLocation() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (!m) return;
  sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/overview`);
}

export const token = () => sessionStorage.getItem(KEY) || '';

export function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

// Replaces `root` with a sign-in form; `done` re-renders once a token is entered.
export function signIn(root, rejected, done) {
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', placeholder: 'token' });
  const form = h(
    'form',
    { class: 'signin', id: 'signin' },
    h('h2', {}, 'This fleet service needs a token'),
    h(
      'p',
      {},
      rejected
        ? 'The token was not accepted. '
        : 'vigil-fleet was started with --token-file. ',
      'Enter one of its tokens (a "* TOKEN" line, or any host\'s); it is kept for this tab only.',
    ),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY, input.value.trim());
    done();
  });
  root.replaceChildren(form);
  input.focus();
}
