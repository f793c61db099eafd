import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { ErrorBox } from './error-box';
import { CheckField, TextArea, TextField, issueAt } from './field';
import { splitList } from './use-options';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Spec = { [key: string]: Json };
/** What the editor sends: the stored spec with the person's edits, for the API to judge. */
export type EditedSpec = Spec;

/** A response's spec as plain JSON (fields the API left out stay out). */
function jsonOf(value: unknown): Json | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(jsonOf).filter((v): v is Json => v !== undefined);
  if (typeof value !== 'object') return undefined;
  const out: Spec = {};
  for (const [key, v] of Object.entries(value)) {
    const json = jsonOf(v);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

/** What the API sends back for a stored secret (docs/api.md): sending it back keeps the value. */
const masked = '********';

const isObject = (v: Json | undefined): v is Spec => typeof v === 'object' && v !== null && !Array.isArray(v);
const isTextList = (v: Json): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const words = (key: string): string => key.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

/** Edited leaves by API path (`outbound.port`): text as typed, or a checkbox's state. */
type Edits = ReadonlyMap<string, string | boolean>;

function initial(spec: Spec, prefix = '', out = new Map<string, string | boolean>(), depth = 0): Map<string, string | boolean> {
  for (const [key, value] of Object.entries(spec)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'boolean') out.set(path, value);
    else if (typeof value === 'string' || typeof value === 'number') out.set(path, String(value));
    else if (value === null) out.set(path, '');
    else if (isTextList(value)) out.set(path, value.join(', '));
    else if (isObject(value) && depth < 2) initial(value, path, out, depth + 1);
    else out.set(path, JSON.stringify(value, null, 2));
  }
  return out;
}

/** The spec to send: each leaf back in its stored type; text the API will judge is sent as typed. */
function build(spec: Spec, edits: Edits, prefix = '', depth = 0): Spec {
  const out: Spec = {};
  for (const [key, value] of Object.entries(spec)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const edit = edits.get(path);
    if (typeof value === 'boolean') out[key] = edit === true;
    else if (typeof value === 'number') out[key] = typeof edit === 'string' && edit.trim() !== '' && !Number.isNaN(Number(edit)) ? Number(edit) : (edit as string);
    else if (typeof value === 'string' || value === null) out[key] = typeof edit === 'string' && (edit !== '' || value !== null) ? edit : value;
    else if (isTextList(value)) out[key] = splitList(String(edit ?? ''));
    else if (isObject(value) && depth < 2) out[key] = build(value, edits, path, depth + 1);
    else {
      try {
        out[key] = JSON.parse(String(edit)) as Json;
      } catch {
        out[key] = String(edit);
      }
    }
  }
  return out;
}

/**
 * Edits a stored resource's spec in place, whatever its kind: one field per stored field (text,
 * numbers, switches, comma lists; nested objects as groups; deeper structures as JSON), sent with
 * PUT, and the API's issues shown at the fields they name. Generic on purpose: a field the schema
 * gains (a trunk's registration, say) is editable without a change here. Secrets come back masked
 * and stay as they are unless replaced.
 */
export function SpecEditor({ title, spec: stored, readOnly = [], onSave, onCancel }: {
  title: string;
  spec: object;
  /** Top-level fields shown but not editable here (a number's `enabled` has its own toggle). */
  readOnly?: readonly string[];
  onSave: (spec: Spec) => Promise<void>;
  onCancel: () => void;
}) {
  const [spec] = useState<Spec>(() => {
    const json = jsonOf(stored);
    return isObject(json) ? json : {};
  });
  const [edits, setEdits] = useState<Edits>(() => initial(spec));
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const set = (path: string, value: string | boolean) => setEdits(new Map(edits).set(path, value));

  const fields = (object: Spec, prefix: string, depth: number): ReactNode[] =>
    Object.entries(object).map(([key, value]) => {
      const path = prefix ? `${prefix}.${key}` : key;
      if (!prefix && readOnly.includes(key)) return null;
      const label = words(key);
      const edit = edits.get(path);
      if (typeof value === 'boolean') return <CheckField key={path} label={label} checked={edit === true} onChange={(e) => set(path, e.target.checked)} />;
      if (isObject(value) && depth < 2) {
        return (
          <fieldset key={path}>
            <legend>{label}</legend>
            <div className="row wrap">{fields(value, path, depth + 1)}</div>
          </fieldset>
        );
      }
      const text = String(edit ?? '');
      if (typeof value === 'string' && value === masked) {
        return <TextField key={path} label={label} type="password" autoComplete="off" value={text === masked ? '' : text} placeholder="set (type to replace)" onChange={(e) => set(path, e.target.value || masked)} issue={issueAt(issues, path)} />;
      }
      if (typeof value === 'string' || typeof value === 'number' || value === null || isTextList(value)) {
        return (
          <TextField
            key={path}
            label={isTextList(value) ? `${label} (comma separated)` : label}
            inputMode={typeof value === 'number' ? 'numeric' : undefined}
            value={text}
            onChange={(e) => set(path, e.target.value)}
            issue={issueAt(issues, path)}
          />
        );
      }
      return <TextArea key={path} label={`${label} (JSON)`} rows={4} value={text} onChange={(e) => set(path, e.target.value)} issue={issueAt(issues, path)} />;
    });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      await onSave(build(spec, edits));
    } catch (failure) {
      setError(failure);
    } finally {
      setSaving(false);
    }
  };
  return (
    <form className="panel spec-editor" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <div className="row wrap">{fields(spec, '', 0)}</div>
      <ErrorBox error={error} title="The API refused the change" />
      <div className="row">
        <button type="submit" className="primary" disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
