import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { CheckField, SelectField, TextArea, TextField, issueAt } from '../components/field';
import { useLeaveGuard } from '../router';
import { useSession } from '../session';
import { masked, SecretField, secretPatch, type SecretEdit } from '../settings/secret-field';

type Json = Record<string, unknown>;
const keep: SecretEdit = { action: 'keep' };
const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json | undefined => (isObject(v) ? v : undefined);
/** Empty text removes the field in a merge patch (its default applies again). */
const orNull = (v: string): string | null => (v.trim() === '' ? null : v.trim());

interface Provider {
  readonly on: boolean;
  readonly apiKey: SecretEdit;
  readonly fields: Readonly<Record<string, string>>;
}

/** Speech providers and the fields each takes besides its key (control-api/model/domain/tenant-speech.ts). */
const speechProviders = [
  { name: 'deepgram', title: 'Deepgram (speech-to-text)', fields: [['baseUrl', 'Base URL (default wss://api.deepgram.com)'], ['model', 'Model (default nova-3)']] },
  { name: 'elevenlabs', title: 'ElevenLabs (text-to-speech)', fields: [['baseUrl', 'Base URL (default https://api.elevenlabs.io)'], ['modelId', 'Model id (default eleven_flash_v2_5)']] },
  { name: 'azure', title: 'Azure AI Speech (text-to-speech)', fields: [['region', 'Region (e.g. centralindia)'], ['baseUrl', 'Base URL (instead of the region)']] },
] as const;

function formOf(settings: Json) {
  const llm = obj(settings['llm']);
  const speech = obj(settings['speech']) ?? {};
  const providers: Record<string, Provider> = {};
  for (const p of speechProviders) {
    const stored = obj(speech[p.name]);
    providers[p.name] = { on: stored !== undefined, apiKey: keep, fields: Object.fromEntries(p.fields.map(([f]) => [f, text(stored?.[f])])) };
  }
  return {
    webhookUrl: text(settings['webhookUrl']),
    webhookSecret: keep,
    ssrfAllowlist: texts(settings['ssrfAllowlist']).join('\n'),
    llmProvider: text(llm?.['provider']),
    llmBaseUrl: text(llm?.['baseUrl']),
    llmModel: text(llm?.['model']),
    llmApiKey: keep,
    llmTimeoutMs: text(llm?.['timeoutMs'] ?? 30000),
    llmMaxRetries: text(llm?.['maxRetries'] ?? 2),
    providers,
    stt: JSON.stringify(speech['stt'] ?? [], null, 2),
  };
}
type Form = ReturnType<typeof formOf>;

/** A JSON Merge Patch (RFC 7396) of `settings` from the form: what the API validates and stores. */
function patchOf(form: Form, hadSpeech: boolean): Json {
  const secret = (edit: SecretEdit) => ('value' in secretPatch(edit) ? secretPatch(edit).value : undefined);
  const llm =
    form.llmProvider === ''
      ? null
      : {
          provider: form.llmProvider,
          baseUrl: orNull(form.llmBaseUrl),
          model: orNull(form.llmModel),
          ...(secret(form.llmApiKey) !== undefined ? { apiKey: secret(form.llmApiKey) } : {}),
          timeoutMs: Number(form.llmTimeoutMs),
          maxRetries: Number(form.llmMaxRetries),
        };
  const speech: Json = {};
  for (const p of speechProviders) {
    const v = form.providers[p.name] as Provider;
    speech[p.name] = v.on
      ? { ...Object.fromEntries(Object.entries(v.fields).map(([k, x]) => [k, orNull(x)])), ...(secret(v.apiKey) !== undefined ? { apiKey: secret(v.apiKey) } : {}) }
      : null;
  }
  let stt: unknown = form.stt;
  try {
    stt = JSON.parse(form.stt);
  } catch {
    // Sent as typed: the API names the field.
  }
  speech['stt'] = stt;
  // Nothing to say about speech and nothing stored: leave it out rather than store an empty one.
  const noSpeech = !hadSpeech && speechProviders.every((p) => !(form.providers[p.name] as Provider).on) && Array.isArray(stt) && stt.length === 0;
  return {
    settings: {
      webhookUrl: orNull(form.webhookUrl),
      ...(secret(form.webhookSecret) !== undefined ? { webhookSecret: secret(form.webhookSecret) } : {}),
      ssrfAllowlist: form.ssrfAllowlist.split(/[\n,]/).map((x) => x.trim()).filter(Boolean),
      llm,
      ...(noSpeech ? {} : { speech }),
    },
  };
}

/**
 * The tenant's settings: speech providers, the language model, the webhook and the SSRF allowlist,
 * saved with one PATCH (a JSON Merge Patch of the tenant). Secrets are write-only: the API answers
 * `********` for a set one, which the page shows as "set", and they are replaced or cleared, never
 * read. Every refusal is the API's, shown at the field its `issues[].path` names.
 */
export function SettingsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [stored, setStored] = useState<Json>();
  const [form, setForm] = useState<Form>();
  const [loadError, setLoadError] = useState<unknown>();
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const [status, setStatus] = useState('');
  const path = { params: { path: { clientId } } };
  const load = (settings: Json) => {
    setStored(settings);
    setForm(formOf(settings));
  };
  useEffect(() => {
    api.GET('/v1/tenants/{clientId}', path).then((r) => load(obj(unwrap(r).spec.settings) ?? {}), setLoadError);
  }, [api, clientId]);
  const dirty = form !== undefined && stored !== undefined && JSON.stringify(form) !== JSON.stringify(formOf(stored));
  useLeaveGuard(() => (dirty ? 'The settings have unsaved changes. Leave and lose them?' : undefined));

  if (loadError) return <ErrorBox error={loadError} title="Could not load the settings" />;
  if (!form || !stored) return <p aria-live="polite">Loading the settings…</p>;
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const at = (p: string) => issueAt(issues, `settings.${p}`);
  const set = (key: keyof Form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });
  const llm = obj(stored['llm']);
  const speech = obj(stored['speech']) ?? {};
  const setProvider = (name: string, next: Partial<Provider>) => setForm({ ...form, providers: { ...form.providers, [name]: { ...(form.providers[name] as Provider), ...next } } });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    setStatus('');
    try {
      const saved = unwrap(await api.PATCH('/v1/tenants/{clientId}', { ...path, body: patchOf(form, obj(stored['speech']) !== undefined) as never }));
      load(obj(saved.spec.settings) ?? {});
      setStatus(`Saved at ${new Date(saved.updatedAt).toLocaleTimeString()}`);
    } catch (failure) {
      setError(failure);
      setStatus('Not saved: see the errors.');
    } finally {
      setSaving(false);
    }
  };

  return (
    <form onSubmit={save} aria-labelledby="settings-title">
      <header className="row">
        <h1 id="settings-title">Settings</h1>
        <p role="status" aria-live="polite" className="muted">
          {status || (dirty ? 'Unsaved changes' : '')}
        </p>
        <button type="submit" className="primary" disabled={saving}>
          {saving ? 'Saving…' : 'Save settings'}
        </button>
      </header>
      <ErrorBox error={error} title="The API refused the settings" />
      <section className="panel" aria-labelledby="webhook-title">
        <h2 id="webhook-title">Webhook</h2>
        <p className="muted">Receives analysis_success and call status events, signed with the secret.</p>
        <div className="row wrap">
          <TextField label="Webhook URL" value={form.webhookUrl} onChange={set('webhookUrl')} issue={at('webhookUrl')} placeholder="https://hooks.example.com/voice" />
          <SecretField label="Webhook secret" isSet={stored['webhookSecret'] === masked} edit={form.webhookSecret} onEdit={(e) => setForm({ ...form, webhookSecret: e })} issue={at('webhookSecret')} />
        </div>
      </section>
      <section className="panel" aria-labelledby="ssrf-title">
        <h2 id="ssrf-title">SSRF allowlist</h2>
        <TextArea
          label="Private hosts, addresses or CIDRs that API and Webhook blocks may reach (one per line)"
          rows={4}
          value={form.ssrfAllowlist}
          onChange={set('ssrfAllowlist')}
          issue={at('ssrfAllowlist')}
        />
      </section>
      <section className="panel" aria-labelledby="llm-title">
        <h2 id="llm-title">Language model</h2>
        <p className="muted">Runs Smart AI blocks and post-call insights. Not configured: the built-in offline engine.</p>
        <div className="row wrap">
          <SelectField label="Provider" value={form.llmProvider} onChange={set('llmProvider')} issue={at('llm.provider')} options={[['', 'Not configured (offline)'], ['offline', 'Offline engine'], ['openaiCompatible', 'OpenAI-compatible API']]} />
          {form.llmProvider !== '' ? (
            <>
              <TextField label="Base URL" value={form.llmBaseUrl} onChange={set('llmBaseUrl')} issue={at('llm.baseUrl')} placeholder="https://api.openai.com/v1" />
              <TextField label="Model" value={form.llmModel} onChange={set('llmModel')} issue={at('llm.model')} />
              <SecretField label="LLM API key" isSet={llm?.['apiKey'] === masked} edit={form.llmApiKey} onEdit={(e) => setForm({ ...form, llmApiKey: e })} issue={at('llm.apiKey')} />
              <TextField label="Timeout (ms)" inputMode="numeric" value={form.llmTimeoutMs} onChange={set('llmTimeoutMs')} issue={at('llm.timeoutMs')} />
              <TextField label="Retries" inputMode="numeric" value={form.llmMaxRetries} onChange={set('llmMaxRetries')} issue={at('llm.maxRetries')} />
            </>
          ) : null}
        </div>
      </section>
      <section className="panel" aria-labelledby="speech-title">
        <h2 id="speech-title">Speech providers</h2>
        <p className="muted">Cloud speech for phone calls. Without them calls use offline speech (espeak-ng voices, English recognition).</p>
        {speechProviders.map((p) => {
          const v = form.providers[p.name] as Provider;
          return (
            <fieldset key={p.name}>
              <legend>{p.title}</legend>
              <CheckField label={`Use ${p.title.split(' (')[0]}`} checked={v.on} onChange={(e) => setProvider(p.name, { on: e.target.checked })} />
              {v.on ? (
                <div className="row wrap">
                  <SecretField
                    label={`${p.title.split(' (')[0]} API key`}
                    isSet={obj(speech[p.name])?.['apiKey'] === masked}
                    edit={v.apiKey}
                    clearable={false}
                    onEdit={(e) => setProvider(p.name, { apiKey: e })}
                    issue={at(`speech.${p.name}.apiKey`) ?? (obj(speech[p.name]) ? undefined : at(`speech.${p.name}`))}
                  />
                  {p.fields.map(([f, label]) => (
                    <TextField key={f} label={label} value={v.fields[f] ?? ''} onChange={(e) => setProvider(p.name, { fields: { ...v.fields, [f]: e.target.value } })} issue={at(`speech.${p.name}.${f}`)} />
                  ))}
                </div>
              ) : null}
            </fieldset>
          );
        })}
        <TextArea label="Speech-to-text routes (JSON: [{languages, provider}], first match wins)" rows={4} value={form.stt} onChange={set('stt')} issue={at('speech.stt')} />
      </section>
    </form>
  );
}
