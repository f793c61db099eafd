import { useState, type FormEvent } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { TextField } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { starterRecipe } from '../recipe/model';
import { Link, navigate } from '../router';
import { useSession } from '../session';

type Recipe = Schemas['Recipe'];

/** The tenant's recipes, paged, and a form that starts a new one in the builder. */
export function RecipesPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const base = `/t/${encodeURIComponent(clientId)}/recipes`;
  const list = usePaged(
    async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/recipes', { params: { path: { clientId }, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    clientId,
  );
  const [name, setName] = useState('');
  const [error, attempt] = useAttempt();
  const columns: ReadonlyArray<Column<Recipe>> = [
    { header: 'Name', cell: (r) => <Link href={`${base}/${r.id}`}>{r.spec.name}</Link> },
    { header: 'Description', cell: (r) => r.spec.description },
    { header: 'Blocks', cell: (r) => r.spec.blocks.length },
    { header: 'Updated', cell: (r) => new Date(r.updatedAt).toLocaleString() },
  ];
  const create = async (event: FormEvent) => {
    event.preventDefault();
    await attempt(async () => {
      const created = unwrap(await api.POST('/v1/tenants/{clientId}/recipes', { params: { path: { clientId } }, body: starterRecipe(name.trim()) }));
      navigate(`${base}/${created.id}`);
    });
  };
  return (
    <>
      <h1>Recipes</h1>
      <form className="row wrap" onSubmit={create} aria-label="New recipe">
        <TextField label="New recipe name" value={name} onChange={(e) => setName(e.target.value)} required />
        <button type="submit" className="primary">
          Create and open
        </button>
      </form>
      <ErrorBox error={error} title="Could not create the recipe" />
      <ResourceList caption="Recipes" noun="recipes" list={list} columns={columns} />
    </>
  );
}
