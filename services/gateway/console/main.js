// The ops console: a single page over the public API (README "Ops console"). Panels re-read
// their data when the live feed (GET /console/events) says something changed.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { signal, effect } from '@preact/signals';
import { html } from './html.js';
import { api, apiKey, authError, followEvents, forgetApiKey, setApiKey } from './api.js';
import { Inbox } from './inbox.js';
import { Runs } from './runs.js';
import { Timeline } from './timeline.js';
import { Ops } from './ops.js';
import { Usage } from './usage.js';

const route = signal(location.hash || '#/inbox');
addEventListener('hashchange', () => (route.value = location.hash || '#/inbox'));

const approvals = signal(null);
const runs = signal(null);
const runFilter = signal({ status: '', tenant: '' });
/** Bumped on every change the feed reports: panels that load on their own re-read. */
const version = signal(0);
const feedState = signal('connecting');
const loadError = signal('');
/** The key's tenant and role (GET /console/session). */
const session = signal({ tenant_id: '', admin: false });
/** An operator key sees every tenant: the tenant column and filter show. */
const seesAllTenants = signal(false);

async function loadApprovals() {
  const res = await api('/approvals/pending');
  approvals.value = res.approvals;
}

async function loadRuns() {
  const f = runFilter.value;
  const q = new URLSearchParams({ limit: '100' });
  if (f.status) q.set('status', f.status);
  if (f.tenant) q.set('tenant_id', f.tenant);
  const res = await api(`/runs?${q}`);
  runs.value = res.runs;
}

async function refresh() {
  try {
    await Promise.all([loadApprovals(), loadRuns()]);
    loadError.value = '';
  } catch (err) {
    loadError.value = err.message;
  }
}

async function loadSession() {
  const s = await api('/console/session').catch(() => null);
  if (!s) return;
  session.value = s;
  seesAllTenants.value = s.admin;
}

effect(() => {
  void runFilter.value;
  if (apiKey.peek() !== null && authError.peek() === '') void loadRuns().catch((err) => (loadError.value = err.message));
});

function KeyForm() {
  const [value, setValue] = useState('');
  return html`
    <form class="card key-form" onSubmit=${(e) => (e.preventDefault(), setApiKey(value.trim()))}>
      <h2>Sign in</h2>
      <p>Paste an API key (a tenant's key shows that tenant; an operator key from AGENTLOOP_ADMIN_KEYS shows every tenant). It stays in this tab only.</p>
      ${authError.value && html`<p class="error">${authError.value}</p>`}
      <input type="password" name="key" placeholder="API key" autocomplete="off" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} />
      <button class="primary" type="submit">Open the console</button>
    </form>
  `;
}

let stopFeed = () => {};
function start() {
  stopFeed();
  void loadSession();
  void refresh();
  stopFeed = followEvents(
    () => {
      version.value++;
      void refresh();
    },
    (s) => (feedState.value = s),
  );
}

function Nav() {
  const tab = (href, label, extra) => html`<a href=${href} class=${route.value.startsWith(href) ? 'active' : ''}>${label}${extra}</a>`;
  const waiting = approvals.value?.length ?? 0;
  return html`
    <nav>
      <span class="brand">AgentLoop ops</span>
      ${tab('#/inbox', 'Approvals', waiting > 0 ? html` <span class="count">${waiting}</span>` : '')} ${tab('#/runs', 'Runs')}
      ${tab('#/queue', 'Queue & dead letter')} ${tab('#/usage', 'Usage')}
      <span class="spacer"></span>
      <span class="feed ${feedState.value}" title="live updates">${feedState.value}</span>
      <button class="link" onClick=${() => (stopFeed(), forgetApiKey(), (authError.value = ''))}>sign out</button>
    </nav>
  `;
}

function Page() {
  const r = route.value;
  const tenantShown = seesAllTenants.value;
  if (r.startsWith('#/runs/')) return html`<${Timeline} runId=${r.slice('#/runs/'.length)} version=${version.value} />`;
  if (r.startsWith('#/runs')) return html`<${Runs} runs=${runs} filter=${runFilter} tenantShown=${tenantShown} />`;
  if (r.startsWith('#/queue')) return html`<${Ops} version=${version.value} />`;
  if (r.startsWith('#/usage')) return html`<${Usage} version=${version.value} />`;
  return html`<${Inbox} approvals=${approvals} tenantShown=${tenantShown} ownTenant=${session.value.tenant_id} onAnswered=${() => void refresh()} />`;
}

function App() {
  const signedIn = apiKey.value !== null && authError.value === '';
  useEffect(() => {
    if (signedIn) start();
    return () => stopFeed();
  }, [signedIn]);
  if (!signedIn) return html`<main><${KeyForm} /></main>`;
  return html`<${Nav} />
    <main>${loadError.value && html`<p class="error">${loadError.value}</p>`}<${Page} /></main>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the static "Loading…" line: render() adds to what is there
render(html`<${App} />`, root);
