import { useEffect, useMemo, useState } from 'react';
import { ApiError, unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { SelectField, TextField, issueAt } from '../components/field';
import { BlockPanel } from '../recipe/block-panel';
import { GlobalSettingsEditor } from '../recipe/global-settings';
import { RecipeGraph } from '../recipe/graph';
import { blockTypes, newBlock, type BlockType, type RecipeSpec, type Settings } from '../recipe/model';
import { Link, useLeaveGuard } from '../router';
import { useSession } from '../session';

type Recipe = Schemas['Recipe'];

/** Block ids the API's issues point at (`blocks[3]...`), for marking them in the graph. */
function invalidBlocks(spec: RecipeSpec, error: unknown): Set<string> {
  const out = new Set<string>();
  if (!(error instanceof ApiError)) return out;
  for (const issue of error.body.issues ?? []) {
    const m = /^blocks\[(\d+)\]/.exec(issue.path);
    const block = m ? spec.blocks[Number(m[1])] : undefined;
    if (block) out.add(block.id);
  }
  return out;
}

/**
 * The recipe builder: the graph, the selected block's settings and exits, and Publish, which saves
 * the whole recipe with PUT. The API validates it (block settings, the graph's rules) and its
 * issues are shown beside the fields they name; nothing is checked here that the API would not.
 */
export function RecipeEditorPage({ clientId, recipeId }: { clientId: string; recipeId: string }) {
  const { api } = useSession();
  const [recipe, setRecipe] = useState<Recipe>();
  const [draft, setDraft] = useState<RecipeSpec>();
  const [selected, setSelected] = useState<string>();
  const [loadError, setLoadError] = useState<unknown>();
  const [saveError, setSaveError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const [status, setStatus] = useState('');
  const [newType, setNewType] = useState<BlockType>('message');
  const [newId, setNewId] = useState('');
  const [addIssue, setAddIssue] = useState<string>();
  const path = { params: { path: { clientId, id: recipeId } } };
  const dirty = draft !== undefined && recipe !== undefined && JSON.stringify(draft) !== JSON.stringify(recipe.spec);
  // Nothing is lost by accident: leaving with unpublished edits asks first (links, back, reload).
  useLeaveGuard(() => (dirty ? 'This recipe has unpublished changes. Leave and lose them?' : undefined));

  useEffect(() => {
    api.GET('/v1/tenants/{clientId}/recipes/{id}', path).then(
      (result) => {
        const loaded = unwrap(result);
        setRecipe(loaded);
        setDraft(loaded.spec);
        setSelected(loaded.spec.startBlockId);
      },
      setLoadError,
    );
  }, [clientId, recipeId]);

  const invalid = useMemo(() => (draft ? invalidBlocks(draft, saveError) : new Set<string>()), [draft, saveError]);
  if (loadError) return <ErrorBox error={loadError} title="Could not load the recipe" />;
  if (!draft || !recipe) return <p aria-live="polite">Loading the recipe…</p>;

  const index = draft.blocks.findIndex((b) => b.id === selected);
  const block = index >= 0 ? draft.blocks[index] : undefined;
  const blockIssues = saveError instanceof ApiError && index >= 0 ? saveError.issuesUnder(`blocks[${index}]`) : [];
  const allIssues = saveError instanceof ApiError ? (saveError.body.issues ?? []) : [];
  const edit = (next: RecipeSpec) => {
    setDraft(next);
    setStatus('');
  };
  const setSettings = (settings: Settings) => edit({ ...draft, blocks: draft.blocks.map((b, i) => (i === index ? ({ ...b, settings } as typeof b) : b)) });
  const connect = (exit: string, to: string | undefined) => {
    const rest = (draft.connections ?? []).filter((c) => !(c.from === selected && c.exit === exit));
    edit({ ...draft, connections: to && selected ? [...rest, { from: selected, exit, to }] : rest });
  };
  const remove = () => {
    if (!selected) return;
    edit({
      ...draft,
      blocks: draft.blocks.filter((b) => b.id !== selected),
      connections: (draft.connections ?? []).filter((c) => c.from !== selected && c.to !== selected),
    });
    setSelected(undefined);
  };
  const taken = new Set(draft.blocks.map((b) => b.id));
  const freeId = (): string => {
    let n = draft.blocks.length + 1;
    while (taken.has(`${newType}-${n}`)) n++;
    return `${newType}-${n}`;
  };
  const add = () => {
    const id = newId.trim() || freeId();
    // Two blocks with one id would be one box in the graph: the second would look lost.
    if (taken.has(id)) {
      setAddIssue(`A block named "${id}" exists already: choose another id.`);
      return;
    }
    setAddIssue(undefined);
    edit({ ...draft, blocks: [...draft.blocks, newBlock(id, newType)] });
    setSelected(id);
    setNewId('');
  };
  const publish = async () => {
    setSaving(true);
    setSaveError(undefined);
    try {
      const saved = unwrap(await api.PUT('/v1/tenants/{clientId}/recipes/{id}', { ...path, body: draft }));
      setRecipe(saved);
      setDraft(saved.spec);
      setStatus(`Published at ${new Date(saved.updatedAt).toLocaleTimeString()}`);
    } catch (error) {
      // The draft stays as it is: fix what the API named and publish again.
      setSaveError(error);
      setStatus('Not published: see the errors. Your changes are kept.');
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="editor">
      <header className="row wrap">
        <h1>
          <Link href={`/t/${encodeURIComponent(clientId)}/recipes`}>Recipes</Link> / {recipe.spec.name}
        </h1>
        <p aria-live="polite" className="muted" role="status">
          {status || (dirty ? 'Unsaved changes' : 'Published')}
        </p>
        <div className="row">
          <button type="button" onClick={() => edit(recipe.spec)} disabled={!dirty || saving}>
            Discard changes
          </button>
          <button type="button" className="primary" onClick={publish} disabled={saving}>
            {saving ? 'Publishing…' : 'Publish'}
          </button>
        </div>
      </header>
      <ErrorBox error={saveError} title="The API refused the recipe" />
      <div className="row wrap">
        <TextField label="Recipe name" value={draft.name} issue={issueAt(allIssues, 'name')} onChange={(e) => edit({ ...draft, name: e.target.value })} />
        <TextField label="Description" value={draft.description ?? ''} issue={issueAt(allIssues, 'description')} onChange={(e) => edit({ ...draft, description: e.target.value })} />
      </div>
      <form
        className="row wrap add-block"
        onSubmit={(e) => {
          e.preventDefault();
          add();
        }}
      >
        <SelectField label="New block type" value={newType} options={blockTypes} onChange={(e) => setNewType(e.target.value as BlockType)} />
        <TextField label="New block id" value={newId} issue={addIssue} placeholder={freeId()} onChange={(e) => setNewId(e.target.value)} />
        <button type="submit">Add block</button>
      </form>
      <GlobalSettingsEditor
        value={draft.globalSettings}
        issues={saveError instanceof ApiError ? saveError.issuesUnder('globalSettings') : []}
        onChange={(globalSettings) => edit({ ...draft, globalSettings: globalSettings as RecipeSpec['globalSettings'] })}
      />
      <div className="editor-body">
        <RecipeGraph spec={draft} selected={selected} onSelect={setSelected} invalid={invalid} />
        {block ? (
          <BlockPanel
            spec={draft}
            block={block}
            issues={blockIssues}
            onSettings={setSettings}
            onConnect={connect}
            onStart={() => selected && edit({ ...draft, startBlockId: selected })}
            onDelete={remove}
          />
        ) : (
          <p className="panel muted">Select a block to edit its settings and exits.</p>
        )}
      </div>
    </div>
  );
}
