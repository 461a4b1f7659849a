// The approvals inbox: tool calls waiting for a decision, ask_human questions and MCP servers' requests
// for input (mcp_elicitation: answered {action, content}), across threads.
// An answer is the usual resume: POST /threads/{thread_id}/runs with command.resume.
import { html } from './html.js';
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { ago, json, shortId } from './format.js';

/** The resume a decision sends; `by` labels the console in the audit trail (the key id is recorded server-side). */
function resumeFor(item, decision, comment) {
  if (item.kind === 'question') return comment;
  if (item.kind === 'mcp_elicitation') {
    if (decision !== 'accept' || item.url) return { action: decision };
    return { action: 'accept', content: JSON.parse(comment || '{}') };
  }
  return { decision, by: 'ops console', comment };
}

/** The form's defaults as the JSON an operator edits. */
function elicitationDefaults(item) {
  const props = item.requested_schema?.properties ?? {};
  const out = {};
  for (const [name, p] of Object.entries(props)) if (p && 'default' in p) out[name] = p.default;
  return JSON.stringify(out, null, 2);
}

function ApprovalCard({ item, onAnswered, tenantShown, ownTenant }) {
  const isElicitation = item.kind === 'mcp_elicitation';
  const [comment, setComment] = useState(item.kind === 'question' ? (item.default ?? '') : isElicitation ? elicitationDefaults(item) : '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const answer = async (decision) => {
    setBusy(true);
    setError('');
    try {
      await api(`/threads/${item.thread_id}/runs`, {
        method: 'POST',
        body: { assistant_id: item.assistant_id ?? 'agent', command: { resume: resumeFor(item, decision, comment) } },
      });
      onAnswered(item, decision);
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  const isQuestion = item.kind === 'question' || isElicitation;
  // A resume is a run on the tenant's thread: only a key of that tenant can send it.
  const canAnswer = !ownTenant || item.tenant_id === ownTenant;
  return html`
    <article class="card approval ${isQuestion ? 'question' : `risk-${item.risk_level}`}" data-testid="approval" data-thread=${item.thread_id}>
      <header>
        <strong>${isElicitation ? `${item.server} asks` : isQuestion ? 'Question' : item.tool}</strong>
        ${!isQuestion && html`<span class="badge risk">${item.risk_level || 'risk ?'}</span>`}
        ${tenantShown && html`<span class="badge">${item.tenant_id}</span>`}
        <span class="muted"
          >thread ${shortId(item.thread_id)} · run <a href="#/runs/${item.run_id}">${shortId(item.run_id)}</a> · ${ago(item.requested_at)}</span
        >
      </header>
      ${
        isQuestion
          ? html`<p class="question-text">${item.question}</p>
              ${item.context && html`<p class="muted">${item.context}</p>`}
              ${isElicitation && item.url && html`<p>Open <a href=${item.url} target="_blank" rel="noopener noreferrer">${item.url}</a>, then accept.</p>`}
              ${isElicitation && !item.url && html`<pre class="args">${json(item.requested_schema)}</pre>`}`
          : html`<p>${item.reason}${item.rule && html` <span class="muted">(${item.rule})</span>`}</p>
              <pre class="args">${json(item.args)}</pre>`
      }
      ${!canAnswer && html`<p class="muted">Answer it with a key of tenant ${item.tenant_id}.</p>`}
      ${
        canAnswer &&
        html`<label class="comment">
          ${isElicitation ? 'Answer (JSON matching the form)' : isQuestion ? 'Answer' : 'Comment (optional, recorded in the audit trail)'}
          <textarea rows="2" value=${comment} onInput=${(e) => setComment(e.currentTarget.value)} disabled=${busy}></textarea>
        </label>`
      }
      ${
        canAnswer &&
        html`<div class="actions">
          ${
            isElicitation
              ? html`<button class="primary" disabled=${busy} onClick=${() => answer('accept')}>Accept</button>
                  <button disabled=${busy} onClick=${() => answer('decline')}>Decline</button>
                  <button class="danger" disabled=${busy} onClick=${() => answer('cancel')}>Cancel</button>`
              : isQuestion
                ? html`<button class="primary" disabled=${busy} onClick=${() => answer('answer')}>Send answer</button>`
                : html`<button class="primary" disabled=${busy} onClick=${() => answer('approve')}>Approve</button>
                    <button class="danger" disabled=${busy} onClick=${() => answer('reject')}>Reject</button>`
          }
          ${error && html`<span class="error">${error}</span>`}
        </div>`
      }
    </article>
  `;
}

export function Inbox({ approvals, tenantShown, ownTenant, onAnswered }) {
  if (approvals.value === null) return html`<p class="muted">Loading…</p>`;
  const list = approvals.value;
  return html`
    <section>
      <h2>Approvals inbox <span class="count" data-testid="inbox-count">${list.length}</span></h2>
      ${
        list.length === 0
          ? html`<p class="empty" data-testid="inbox-empty">Nothing waits for a human.</p>`
          : list.map((item) => html`<${ApprovalCard} key=${item.id} item=${item} tenantShown=${tenantShown} ownTenant=${ownTenant} onAnswered=${onAnswered} />`)
      }
    </section>
  `;
}
