// The console's start-up: sign-in and sign-out, the hash router that mounts
// one view module at a time, and the namespace and search state the views
// are given in their ctx.

import * as api from './lib/api.js';
import { h, clear, clearError, toast, formDialog } from './lib/dom.js';

const NS_KEY = 'orca.namespace';
const views = new Set(['cluster', 'workloads', 'workload', 'pods', 'pod', 'networking', 'resources', 'resource']);

const $ = (sel) => document.querySelector(sel);
const loginEl = $('#login');
const appEl = $('#app');
const loginForm = $('form[data-login]');
const loginError = $('[data-login-error]');
const nsSelect = $('select[data-namespace]');
const searchInput = $('input[data-search]');
const outlet = $('#outlet');
const userEl = $('[data-user]');

const state = {
  namespace: sessionStorage.getItem(NS_KEY) || '',
  search: '',
  searchFns: new Set(),
  unmount: null,
  mountSeq: 0,
  nsWatch: null,
  namespaces: [],
  nsForbidden: false,
  guessedNamespaces: [],
  ownNamespace: '',
  routeKey: '',
};

// The admin's link carries the token in the fragment (#token=...), which no
// server sees; it is moved to sessionStorage and out of the address bar
// before anything else runs.
function takeTokenFromFragment() {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (!m) return false;
  api.setToken(decodeURIComponent(m[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/cluster`);
  return true;
}

function showLogin(message) {
  document.body.removeAttribute('data-signed-in');
  appEl.hidden = true;
  loginEl.hidden = false;
  loginError.hidden = !message;
  loginError.textContent = message || '';
  loginForm.elements.token.value = '';
  loginForm.elements.token.focus();
}

function stopSession() {
  if (state.unmount) {
    try { state.unmount(); } catch (e) { console.error(e); }
    state.unmount = null;
  }
  clear(outlet);
  state.routeKey = '';
  state.mountSeq++;
  if (state.nsWatch) { state.nsWatch.stop(); state.nsWatch = null; }
}

function signOut(message) {
  api.clearToken();
  stopSession();
  showLogin(message);
}

api.onUnauthorized((message) => {
  if (!document.body.hasAttribute('data-signed-in') && loginEl.hidden === false) return;
  stopSession();
  showLogin(message && message !== 'Unauthorized' ? `Unauthorized: ${message}` : 'Unauthorized');
});

loginForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const token = loginForm.elements.token.value.trim();
  if (!token) return;
  api.setToken(token);
  const button = loginForm.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    // Discovery is open to every authenticated user, so it tells a good
    // token from a bad one without needing any grant.
    await api.get('/api');
    await start();
  } catch (err) {
    api.clearToken();
    showLogin(err.status === 401 ? 'Unauthorized' : err.message);
  } finally {
    button.disabled = false;
  }
});

$('button[data-action=sign-out]').addEventListener('click', () => signOut(''));

$('[data-skip]').addEventListener('click', () => $('#main').focus());

async function start() {
  loginEl.hidden = true;
  appEl.hidden = false;
  document.body.setAttribute('data-signed-in', '');
  userEl.textContent = 'signed in';
  userEl.title = '';
  // What was learnt about the previous user's namespaces is theirs.
  state.ownNamespace = '';
  state.guessedNamespaces = [];
  state.namespaces = [];
  route();
  try {
    const who = await api.whoAmI();
    if (who && who.username) {
      const sa = /^system:serviceaccount:([^:]+):/.exec(who.username);
      if (sa) state.ownNamespace = sa[1];
      userEl.textContent = who.username;
      userEl.title = [who.username, ...(who.groups || [])].join('\n');
    }
  } catch { /* a 401 has already signed out */ }
  // After who-am-I, so a user who may not list namespaces starts in the
  // service account's own.
  if (document.body.hasAttribute('data-signed-in')) watchNamespaces();
}

const OTHER = '\u0000other';

function renderNamespaces() {
  const names = state.namespaces.map((n) => n.metadata.name);
  for (const extra of [state.namespace, ...state.guessedNamespaces]) {
    if (extra && !names.includes(extra)) names.push(extra);
  }
  names.sort();
  const wanted = state.namespace;
  // Rebuild only when the set changed, so an open dropdown is not disturbed
  // by a namespace's status update.
  const sig = `${state.nsForbidden}\n${names.join('\n')}`;
  if (nsSelect.dataset.sig !== sig) {
    nsSelect.dataset.sig = sig;
    clear(nsSelect);
    nsSelect.appendChild(h('option', { value: '' }, 'All namespaces'));
    for (const n of names) nsSelect.appendChild(h('option', { value: n }, n));
    // A user who may not list namespaces names the one to work in.
    if (state.nsForbidden) nsSelect.appendChild(h('option', { value: OTHER }, 'Other namespace\u2026'));
  }
  if (nsSelect.value !== wanted) nsSelect.value = wanted;
}

function setNamespace(ns) {
  state.namespace = ns;
  sessionStorage.setItem(NS_KEY, ns);
  renderNamespaces();
  // Detail pages belong to one object; a new namespace goes back to the list.
  const [view, params] = parseHash();
  if (moduleFor(view, params) !== view) {
    location.hash = `#/${view}`;
    return;
  }
  remount();
}

function watchNamespaces() {
  state.nsForbidden = false;
  renderNamespaces();
  state.nsWatch = api.watchList('/api/v1/namespaces', {
    onUpdate: (items) => {
      state.namespaces = items;
      renderNamespaces();
    },
    onError: (err) => {
      if (err.status !== 403) return;
      if (state.nsWatch) state.nsWatch.stop();
      state.nsForbidden = true;
      state.guessedNamespaces = [state.ownNamespace, 'default'].filter(Boolean);
      renderNamespaces();
      // All namespaces would be refused everywhere: start in the user's own.
      if (!state.namespace) setNamespace(state.ownNamespace || 'default');
    },
  });
}

nsSelect.addEventListener('change', async () => {
  if (nsSelect.value !== OTHER) {
    setNamespace(nsSelect.value);
    return;
  }
  nsSelect.value = state.namespace;
  const v = await formDialog({
    title: 'Work in another namespace', name: 'namespace', confirmLabel: 'Switch',
    fields: [{ name: 'namespace', label: 'Namespace', value: '', required: true }],
  });
  const ns = v && v.namespace.trim();
  if (!ns) return;
  if (!state.guessedNamespaces.includes(ns)) state.guessedNamespaces.push(ns);
  setNamespace(ns);
});

let searchTimer = 0;
searchInput.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.search = searchInput.value.trim();
    for (const fn of state.searchFns) {
      try { fn(state.search); } catch (e) { console.error(e); }
    }
  }, 200);
});

document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t.closest && t.closest('input, textarea, select, [contenteditable], [data-terminal], dialog')) return;
  if (!document.body.hasAttribute('data-signed-in')) return;
  e.preventDefault();
  searchInput.focus();
  searchInput.select();
});

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const parts = raw.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  const view = parts[0] || 'cluster';
  return [view, parts.slice(1)];
}

// moduleFor maps a route to its view module: a list route with parts after
// its name is the detail view of one object.
function moduleFor(view, params) {
  if (view === 'workloads' && params.length) return 'workload';
  if (view === 'pods' && params.length) return 'pod';
  if (view === 'resources' && params.length >= 4) return 'resource';
  return view;
}

function route() {
  if (!document.body.hasAttribute('data-signed-in')) return;
  if (/^#token=/.test(location.hash)) {
    takeTokenFromFragment();
  }
  const [view, params] = parseHash();
  if (!views.has(view)) {
    location.replace('#/cluster');
    return;
  }
  for (const a of document.querySelectorAll('nav [data-nav]')) {
    if (a.dataset.nav === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  mount(moduleFor(view, params), params);
}

function remount() {
  const [view, params] = parseHash();
  state.routeKey = '';
  mount(moduleFor(view, params), params);
}

async function mount(name, params) {
  const key = `${name}|${params.join('/')}|${state.namespace}`;
  if (key === state.routeKey) return;
  state.routeKey = key;
  const seq = ++state.mountSeq;
  if (state.unmount) {
    try { state.unmount(); } catch (e) { console.error(e); }
    state.unmount = null;
  }
  state.searchFns = new Set();
  clearError();
  clear(outlet);
  outlet.appendChild(h('p', { class: 'muted loading' }, 'Loading\u2026'));
  let mod;
  try {
    mod = await importView(name);
  } catch (e) {
    if (seq !== state.mountSeq) return;
    clear(outlet);
    outlet.appendChild(h('div', { class: 'panel' }, h('p', null, `The ${name} view could not be loaded: ${e.message}`)));
    return;
  }
  if (seq !== state.mountSeq) return;
  clear(outlet);
  const searchFns = state.searchFns;
  const ctx = {
    namespace: state.namespace,
    search: state.search,
    params,
    navigate: (hash) => { location.hash = hash.startsWith('#') ? hash : `#${hash}`; },
    onSearch: (fn) => { searchFns.add(fn); return () => searchFns.delete(fn); },
  };
  try {
    let un = mod.mount(outlet, ctx);
    // A view may mount asynchronously and resolve to its unmount; if the
    // route moved on meanwhile, it is unmounted as soon as it is known.
    if (un && typeof un.then === 'function') {
      state.unmount = null;
      un = await un;
      if (seq !== state.mountSeq) {
        if (typeof un === 'function') un();
        return;
      }
    }
    state.unmount = typeof un === 'function' ? un : null;
  } catch (e) {
    console.error(e);
    if (seq === state.mountSeq) toast(`The ${name} view failed: ${e.message}`, 'error');
  }
  const main = $('#main');
  if (document.activeElement === document.body) main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => {
  if (/^#token=/.test(location.hash)) {
    takeTokenFromFragment();
    stopSession();
    start();
    return;
  }
  route();
});

takeTokenFromFragment();
if (api.getToken()) {
  start();
} else {
  showLogin('');
}

// importView loads a view's module, trying again after a failed fetch (a
// node's network interfaces changing makes the browser drop requests).
// A module whose fetch failed stays failed under its URL, so the retry
// asks under another.
async function importView(name) {
  for (let i = 0; ; i++) {
    try {
      return await import(i === 0 ? `./views/${name}.js` : `./views/${name}.js?retry=${i}`);
    } catch (e) {
      if (i >= 2 || !(e instanceof TypeError)) throw e;
      await new Promise((resolve) => setTimeout(resolve, 300 * (i + 1)));
    }
  }
}
