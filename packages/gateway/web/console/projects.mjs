/** The caller's projects: list, create, and one project's page (settings, setup, money). */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useState } from '/assets/vendor/preact-hooks.mjs';
import { api, projectPath } from './api.mjs';
import { Earnings } from './earnings.mjs';
import { Endpoints } from './endpoints.mjs';
import { Payments } from './payments.mjs';
import { Apis, Rails } from './setup.mjs';
import { Checkbox, ErrorAlert, Field, Status, useAction, useLoad } from './ui.mjs';

function CreateProject({ onCreated }) {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [category, setCategory] = useState('');
  const { busy, error, status, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const p = await api('POST', '/v1/projects', {
        slug,
        name,
        ...(description ? { description } : {}),
        ...(category ? { category } : {}),
      });
      setSlug('');
      setName('');
      setDescription('');
      setCategory('');
      onCreated(p);
    }, 'Project created.');
  };
  return html`<form onSubmit=${submit} aria-labelledby="new-project-title">
    <h3 id="new-project-title">New project</h3>
    <${Field} label="Slug" value=${slug} onInput=${setSlug} required
      hint="Lower-case letters, digits and dashes; part of every paid URL: /p/<slug>/…" />
    <${Field} label="Name" value=${name} onInput=${setName} required />
    <${Field} label="Description" value=${description} onInput=${setDescription} />
    <${Field} label="Category" value=${category} onInput=${setCategory} hint="e.g. weather (default: other)" />
    <button type="submit" disabled=${busy}>Create project</button>
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </form>`;
}

function Settings({ project, onChanged, onDeleted }) {
  const [name, setName] = useState(project.name);
  const [description, setDescription] = useState(project.description);
  const [category, setCategory] = useState(project.category);
  const [x402Exact, setX402Exact] = useState(project.x402Exact);
  const [confirming, setConfirming] = useState(false);
  const { busy, error, status, run } = useAction();
  const save = (e) => {
    e.preventDefault();
    run(async () => {
      onChanged(await api('PATCH', projectPath(project.slug), { name, description, category, x402Exact }));
    }, 'Project saved.');
  };
  const remove = () =>
    run(async () => {
      await api('DELETE', projectPath(project.slug));
      onDeleted();
    });
  return html`<section aria-labelledby="settings-title">
    <h3 id="settings-title">Settings</h3>
    <form onSubmit=${save}>
      <${Field} label="Project name" value=${name} onInput=${setName} required />
      <${Field} label="Project description" value=${description} onInput=${setDescription} />
      <${Field} label="Project category" value=${category} onInput=${setCategory} />
      <${Checkbox} label="Also accept stock x402 exact payments" checked=${x402Exact} onChange=${setX402Exact} />
      <button type="submit" disabled=${busy}>Save project</button>
    </form>
    ${
      confirming
        ? html`<p>Delete ${project.slug} with its APIs, endpoints and rails?
            ${' '}<button type="button" class="danger" disabled=${busy} onClick=${remove}>Yes, delete project</button>
            ${' '}<button type="button" onClick=${() => setConfirming(false)}>Keep it</button></p>`
        : html`<button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete project…</button>`
    }
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </section>`;
}

function ProjectPage({ slug, onBack }) {
  const { data: project, error, reload } = useLoad(() => api('GET', projectPath(slug)), [slug]);
  const apis = useLoad(() => api('GET', projectPath(slug, '/apis')), [slug]);
  if (error) return html`<${ErrorAlert} error=${error} />`;
  if (!project) return html`<p role="status" aria-live="polite">Loading ${slug}…</p>`;
  return html`<article aria-labelledby="project-title">
    <p><button type="button" onClick=${onBack}>← All projects</button></p>
    <h2 id="project-title">${project.name} <small>(${project.slug})</small></h2>
    <${Earnings} slug=${slug} />
    <${Payments} slug=${slug} />
    <${Endpoints} slug=${slug} apis=${apis.data?.apis ?? []} />
    <${Apis} slug=${slug} apis=${apis.data?.apis} error=${apis.error} reload=${apis.reload} />
    <${Rails} slug=${slug} />
    <${Settings} key=${project.id} project=${project} onChanged=${reload} onDeleted=${onBack} />
  </article>`;
}

export function Projects() {
  const [open, setOpen] = useState(null);
  const { data, error, reload } = useLoad(() => api('GET', '/v1/projects'), [open]);
  if (open) return html`<${ProjectPage} slug=${open} onBack=${() => setOpen(null)} />`;
  const projects = data?.projects;
  return html`<section aria-labelledby="projects-title">
    <h2 id="projects-title">Projects</h2>
    <${ErrorAlert} error=${error} />
    ${
      !projects
        ? html`<p role="status" aria-live="polite">Loading projects…</p>`
        : projects.length === 0
          ? html`<p>No projects yet: create one below.</p>`
          : html`<table>
              <caption>Your projects</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Category</th><th scope="col">Owner</th></tr></thead>
              <tbody>
                ${projects.map(
                  (p) => html`<tr key=${p.id}>
                    <th scope="row"><button type="button" class="link" onClick=${() => setOpen(p.slug)}>${p.name}</button></th>
                    <td>${p.slug}</td><td>${p.category}</td><td class="address">${p.owner.chain}:${p.owner.address}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
    }
    <${CreateProject} onCreated=${(p) => {
      reload();
      setOpen(p.slug);
    }} />
  </section>`;
}
