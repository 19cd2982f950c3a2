// What a site adds to use the browser SDK with a project (docs/SDK.md): the page's script and its worker file's line.
interface SdkSnippetProps {
  projectId: string;
  /** A publishable key, when one is at hand (just created); a placeholder otherwise. */
  publishableKey?: string | undefined;
}

export function SdkSnippet({ projectId, publishableKey }: SdkSnippetProps) {
  // The dashboard is served by Herald itself: its origin is the address pages reach Herald at.
  const herald = window.location.origin;
  const page = [
    `<script src="${herald}/sdk/herald.js"></script>`,
    '<script>',
    `  Herald.init({ baseUrl: '${herald}', projectId: '${projectId}', key: '${publishableKey ?? 'hrd_pub_live_…'}' });`,
    '  // then, from a click: Herald.subscribe()',
    '</script>',
  ].join('\n');
  return (
    <div className="field" data-testid="sdk-snippet">
      <span className="label">Web push on your site</span>
      <span className="hint">On every page:</span>
      <pre className="secret">{page}</pre>
      <span className="hint">
        And a service worker file of your own at <code>/herald-sw.js</code> (it must come from your site&apos;s origin):
      </span>
      <pre className="secret">{`importScripts('${herald}/sdk/herald-sw.js');`}</pre>
    </div>
  );
}
