/** Small shared pieces: the async-action hook, the error alert, the status line, labelled fields. */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useCallback, useEffect, useState } from '/assets/vendor/preact-hooks.mjs';

let nextId = 0;
/** A unique id for a label's `for`. */
export function useId(prefix) {
  const [id] = useState(() => `${prefix}-${++nextId}`);
  return id;
}

/**
 * Runs async actions for a section: `busy` while one runs, the last failure's message in
 * `error` (shown in a role=alert), a short success note in `status` (aria-live).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [status, setStatus] = useState('');
  const run = useCallback(async (fn, done) => {
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      const out = await fn();
      if (done) setStatus(done);
      return out;
    } catch (e) {
      setError(e?.message ?? String(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, status, run, setError };
}

/** Loads data when `deps` change; `reload()` reloads. */
export function useLoad(load, deps) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e?.message ?? String(e)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

export function ErrorAlert({ error }) {
  return error ? html`<p class="alert" role="alert">${error}</p>` : null;
}

export function Status({ busy, text }) {
  return html`<p class="console-status" role="status" aria-live="polite">${busy ? 'Working…' : text}</p>`;
}

/** A labelled input; extra props go to the input. */
export function Field({ label, value, onInput, type = 'text', hint, ...rest }) {
  const id = useId('f');
  const hintId = hint ? `${id}-hint` : undefined;
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} type=${type} value=${value} aria-describedby=${hintId}
      onInput=${(e) => onInput(type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value)}
      ...${rest} />
    ${hint ? html`<small id=${hintId}>${hint}</small>` : null}
  </div>`;
}

export function Checkbox({ label, checked, onChange }) {
  const id = useId('c');
  return html`<div class="field checkbox">
    <input id=${id} type="checkbox" checked=${checked} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <label for=${id}>${label}</label>
  </div>`;
}

export function Select({ label, value, onChange, options }) {
  const id = useId('s');
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${options.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
    </select>
  </div>`;
}
