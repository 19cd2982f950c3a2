// Push campaigns' pages: the builder's content (title, body, URLs, two buttons) with a live notification preview, and
// the campaign's content on its page; the rest is the campaign pages every channel shares.
import { lazy, Suspense } from 'react';
import type { Schemas } from '../api/client';
import { Field, TextAreaField } from '../components/field';
import { NotificationPreview } from '../components/notification-preview';
import { contentOf, EMPTY_FORM, formOf, toCampaignBody, type CampaignBody, type CampaignForm } from './campaign-builder-model';
import { EditCampaignPage, NewCampaignPage, type BuilderChannel } from './campaign-builder';
import { pushCampaigns } from './campaign-channel';
import { CampaignPage } from './campaign-page';
import { PushTestButton } from './push-test-button';

type Campaign = Schemas['Campaign'];

const builder: BuilderChannel<Campaign, CampaignForm, CampaignBody> = {
  campaigns: pushCampaigns,
  empty: EMPTY_FORM,
  formOf,
  toBody: toCampaignBody,
  formLabel: 'Campaign',
  fields: ['name', 'content', 'segment', 'schedule', 'utm'],
  utmLegend: 'UTM parameters (added to the click URL and every button URL)',
  reachUnit: (count) => `push subscriber${count === 1 ? '' : 's'}`,
  useContent: ({ projectId, form, set, save }) => {
    const error = save.error;
    const content = contentOf(form);
    const action = (index: number, patch: Partial<CampaignForm['actions'][number]>) =>
      set({ actions: form.actions.map((item, i) => (i === index ? { ...item, ...patch } : item)) });
    return {
      content: (
        <>
          <div className="row">
            <div>
              <Field label="Title" field="content.title" error={error} value={form.title} onChange={(e) => set({ title: e.target.value })} required maxLength={250} />
              <TextAreaField label="Body" field="content.body" error={error} value={form.body} onChange={(e) => set({ body: e.target.value })} required rows={3} maxLength={2000} />
              <Field label="Click URL" field="content.clickUrl" error={error} type="url" value={form.clickUrl} onChange={(e) => set({ clickUrl: e.target.value })} placeholder="https://" />
              <Field label="Icon URL" field="content.iconUrl" error={error} type="url" value={form.iconUrl} onChange={(e) => set({ iconUrl: e.target.value })} />
              <Field label="Image URL" field="content.imageUrl" error={error} type="url" value={form.imageUrl} onChange={(e) => set({ imageUrl: e.target.value })} />
            </div>
            <div className="preview-column">
              <NotificationPreview content={{ ...content, title: content.title || 'Title', body: content.body || 'Body' }} origin={originOf(form.clickUrl)} />
              <PushTestButton projectId={projectId} notification={content} />
            </div>
          </div>
          {form.actions.map((item, index) => (
            <div className="row" key={index}>
              <Field label={`Button ${index + 1} label`} field={`content.actions.${index}.title`} error={error} value={item.title} onChange={(e) => action(index, { title: e.target.value })} maxLength={64} />
              <Field label={`Button ${index + 1} URL`} field={`content.actions.${index}.action`} error={error} type="url" value={item.action} onChange={(e) => action(index, { action: e.target.value })} />
            </div>
          ))}
        </>
      ),
    };
  },
};

function originOf(url: string | undefined): string {
  try {
    return url ? new URL(url).host : 'your site';
  } catch {
    return 'your site';
  }
}

function Content({ campaign: c }: { campaign: Campaign }) {
  return (
    <section aria-labelledby="content-title">
      <h3 id="content-title">Content</h3>
      <NotificationPreview content={c.content} origin={originOf(c.content.clickUrl)} />
      <dl className="details">
        <div>
          <dt>Title</dt>
          <dd>{c.content.title}</dd>
        </div>
        <div>
          <dt>Body</dt>
          <dd>{c.content.body}</dd>
        </div>
        <div>
          <dt>Click URL</dt>
          <dd>{c.content.clickUrl ?? '—'}</dd>
        </div>
      </dl>
    </section>
  );
}

export const NewPushCampaignPage = () => <NewCampaignPage channel={builder} />;
export const EditPushCampaignPage = () => <EditCampaignPage channel={builder} />;
// Chart.js comes with the chart only, so the campaign pages' bundle stays without it.
const PushCampaignActivity = lazy(() => import('./push-campaign-activity').then((module) => ({ default: module.PushCampaignActivity })));

export const PushCampaignPage = () => (
  <CampaignPage
    channel={pushCampaigns}
    details={(c, status) => (
      <>
        <Content campaign={c} />
        {c.status !== 'draft' && (
          <Suspense fallback={<p className="muted">Loading the chart…</p>}>
            <PushCampaignActivity campaignId={c.id} live={status === 'sending' || status === 'scheduled'} />
          </Suspense>
        )}
      </>
    )}
  />
);
