import type { ApiIssue } from '../api/client';
import { SelectField, TextArea, TextField, issueAt } from '../components/field';
import { retyped, type Named, type Settings } from './model';

interface FieldsProps {
  readonly type: string;
  readonly settings: Settings;
  /** Issues under this block's `settings` (paths relative to it). */
  readonly issues: readonly ApiIssue[];
  readonly onChange: (settings: Settings) => void;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

const namedList = (v: unknown): Named[] => (Array.isArray(v) ? (v as Named[]) : []);

/** A list of `{name, description}` rows (intents, extracted variables) with add and remove. */
function NamedRows({ label, field, settings, issues, onChange, withType }: { label: string; field: string; settings: Settings; issues: readonly ApiIssue[]; onChange: (s: Settings) => void; withType?: boolean }) {
  const rows = namedList(settings[field]);
  const set = (next: Named[]) => onChange({ ...settings, [field]: next });
  return (
    <fieldset>
      <legend>{label}</legend>
      {rows.map((row, i) => (
        <div className="row wrap" key={i}>
          <TextField label={`${label} ${i + 1} name`} value={row.name} issue={issueAt(issues, `${field}[${i}].name`)} onChange={(e) => set(rows.map((r, j) => (j === i ? { ...r, name: e.target.value } : r)))} />
          {withType ? (
            <SelectField
              label={`${label} ${i + 1} type`}
              value={row.type ?? 'text'}
              options={['text', 'boolean', 'number', 'date', 'enum', 'digits'].map((t) => [t, t] as const)}
              issue={issueAt(issues, `${field}[${i}].type`) ?? issueAt(issues, `${field}[${i}].options`) ?? issueAt(issues, `${field}[${i}].length`)}
              onChange={(e) => set(rows.map((r, j) => (j === i ? retyped(r, e.target.value) : r)))}
            />
          ) : null}
          <TextField label={`${label} ${i + 1} description`} value={row.description ?? ''} issue={issueAt(issues, `${field}[${i}].description`)} onChange={(e) => set(rows.map((r, j) => (j === i ? { ...r, description: e.target.value } : r)))} />
          <button type="button" onClick={() => set(rows.filter((_, j) => j !== i))} aria-label={`Remove ${label.toLowerCase()} ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      {issueAt(issues, field) && !rows.length ? <small className="issue">{issueAt(issues, field)}</small> : null}
      <button type="button" onClick={() => set([...rows, withType ? { name: '', type: 'text', description: '' } : { name: '', description: '' }])}>
        Add {label.toLowerCase().replace(/s$/, '')}
      </button>
    </fieldset>
  );
}

/**
 * The settings a person edits most, per block type, as labelled fields; every setting is also in
 * the JSON view beside it. Issues come from the API's answer to the last save, so the messages are
 * exactly the API's.
 */
export function BlockFields({ type, settings, issues, onChange }: FieldsProps) {
  const text = (field: string, label: string, multiline = false) => {
    const props = { label, value: str(settings[field]), issue: issueAt(issues, field), onChange: (e: { target: { value: string } }) => onChange({ ...settings, [field]: e.target.value }) };
    return multiline ? <TextArea key={field} rows={4} {...props} /> : <TextField key={field} {...props} />;
  };
  const number = (field: string, label: string) => (
    <TextField
      key={field}
      label={label}
      inputMode="numeric"
      value={str(settings[field])}
      issue={issueAt(issues, field)}
      onChange={(e) => {
        const raw = e.target.value.trim();
        const next = { ...settings };
        if (raw === '') delete next[field];
        else next[field] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
        onChange(next);
      }}
    />
  );
  switch (type) {
    case 'message':
      return text('text', 'Text (may use {{variable}})', true);
    case 'smartAi':
    case 'ask':
      return (
        <>
          {text('prompt', 'Prompt', true)}
          {text('additionalInstructions', 'Additional instructions', true)}
          {number('retryLimit', 'Retry limit (turns)')}
          {type === 'ask' ? <NamedRows label="Variables" field="variables" settings={settings} issues={issues} onChange={onChange} withType /> : null}
          <NamedRows label="Intents" field="intents" settings={settings} issues={issues} onChange={onChange} />
        </>
      );
    case 'code':
      return text('source', 'Source (function main(context, variables, plugins))', true);
    case 'api':
      return (
        <>
          <SelectField label="Method" value={str(settings.method) || 'GET'} options={['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => [m, m] as const)} issue={issueAt(issues, 'method')} onChange={(e) => onChange({ ...settings, method: e.target.value })} />
          {text('url', 'URL')}
        </>
      );
    case 'webhook':
      return text('url', 'URL');
    case 'transfer':
      return (
        <>
          {text('target', 'Target (SIP URI or E.164 number)')}
          {text('bridgeMessage', 'Bridge message')}
        </>
      );
    case 'close':
      return (
        <>
          {text('closingScript', 'Closing script', true)}
          {text('disposition', 'Disposition tag')}
        </>
      );
    default:
      return <p className="muted">Edit this block's settings in the JSON view below.</p>;
  }
}
