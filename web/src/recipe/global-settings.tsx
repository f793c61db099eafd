import { useEffect, useState } from 'react';
import type { ApiIssue } from '../api/client';
import { TextArea } from '../components/field';

/**
 * The recipe's global settings (persona, confines, voicemail, knowledge base, smart interruption,
 * post-call insight parameters) as JSON, applied when the field loses focus. The API validates
 * them on Publish; its issues under `globalSettings` show here.
 */
export function GlobalSettingsEditor({ value, issues, onChange }: { value: unknown; issues: readonly ApiIssue[]; onChange: (next: Record<string, unknown>) => void }) {
  const [text, setText] = useState(() => JSON.stringify(value ?? {}, null, 2));
  const [local, setLocal] = useState<string>();
  useEffect(() => setText(JSON.stringify(value ?? {}, null, 2)), [value]);
  const apiIssue = issues.map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`).join('; ');
  return (
    <details className="panel" open={issues.length > 0 || undefined}>
      <summary>Global settings and post-call insights (JSON)</summary>
      <TextArea
        label="Global settings of the recipe as JSON"
        rows={12}
        spellCheck={false}
        value={text}
        issue={local ?? (apiIssue || undefined)}
        hint='Post-call insights: "insights": [{"name": "agreed", "description": "Did the caller agree?", "type": "boolean"}]'
        onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          try {
            const parsed: unknown = JSON.parse(text);
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('global settings must be a JSON object');
            setLocal(undefined);
            onChange(parsed as Record<string, unknown>);
          } catch (error) {
            setLocal(`Not applied: ${(error as Error).message}`);
          }
        }}
      />
    </details>
  );
}
