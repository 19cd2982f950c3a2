// A design rendered to email HTML with React Email's components: tables, inline styles, columns stacking on phones.
import { Body, Button, Column, Container, Head, Heading, Hr, Html, Img, Link, Row, Section, Text } from '@react-email/components';
import type { CSSProperties, ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { SOCIAL_NAMES, type Block, type DesignSettings, type EmailDesign, type LeafBlock } from './email-design-model';

const DOCTYPE = '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">';

const FONTS: Record<DesignSettings['fontFamily'], string> = {
  'sans-serif': 'Helvetica, Arial, sans-serif',
  serif: 'Georgia, "Times New Roman", serif',
};

// The one rule inline styles cannot say: below 480 px the columns stack. Clients without <style> support keep them side by side.
const RESPONSIVE = '@media only screen and (max-width: 480px) { .herald-column { display: block !important; width: 100% !important; } }';

/** Lines kept: each line break of the text is a <br>. */
function lines(text: string): ReactNode[] {
  return text.split('\n').flatMap((line, index) => (index === 0 ? [line] : [<br key={index} />, line]));
}

function Leaf({ block, settings }: { block: LeafBlock; settings: DesignSettings }) {
  const color = settings.textColor;
  switch (block.type) {
    case 'text':
      return block.style === 'heading' ? (
        <Heading as="h2" style={{ margin: '8px 0', fontSize: 24, lineHeight: '32px', fontWeight: 700, color, textAlign: block.align }}>
          {lines(block.text)}
        </Heading>
      ) : (
        <Text style={{ margin: '8px 0', fontSize: 16, lineHeight: '24px', color, textAlign: block.align }}>{lines(block.text)}</Text>
      );
    case 'image': {
      if (block.src === '') return null;
      const image = <Img src={block.src} alt={block.alt} width={block.width} style={{ maxWidth: '100%', height: 'auto', display: 'inline-block' }} />;
      return (
        <Section style={{ textAlign: block.align, margin: '8px 0' }}>
          {block.href === '' ? image : <Link href={block.href}>{image}</Link>}
        </Section>
      );
    }
    case 'button':
      return (
        <Section style={{ textAlign: block.align, margin: '12px 0' }}>
          <Button
            href={block.url}
            style={{ backgroundColor: block.color, color: block.textColor, padding: '12px 24px', borderRadius: 6, fontSize: 16, fontWeight: 600, textDecoration: 'none' }}
          >
            {block.label}
          </Button>
        </Section>
      );
    case 'divider':
      return <Hr style={{ borderColor: block.color, borderStyle: 'solid', borderWidth: '1px 0 0', margin: '16px 0' }} />;
    case 'spacer':
      return (
        <table role="presentation" width="100%" cellPadding={0} cellSpacing={0} border={0}>
          <tbody>
            <tr>
              <td height={block.height} style={{ height: block.height, lineHeight: `${block.height}px`, fontSize: 1 }}>
                &nbsp;
              </td>
            </tr>
          </tbody>
        </table>
      );
    case 'social':
      return (
        <Text style={{ margin: '8px 0', fontSize: 14, lineHeight: '20px', textAlign: block.align, color }}>
          {block.links.flatMap((link, index) => [
            ...(index === 0 ? [] : [<span key={`sep${index}`}> · </span>]),
            <Link key={index} href={link.url} style={{ color, textDecoration: 'underline' }}>
              {SOCIAL_NAMES[link.network]}
            </Link>,
          ])}
        </Text>
      );
    case 'footer':
      return <Text style={{ margin: '16px 0 8px', fontSize: 12, lineHeight: '18px', color: '#71717a', textAlign: 'center' }}>{lines(block.text)}</Text>;
  }
}

function BlockView({ block, settings }: { block: Block; settings: DesignSettings }) {
  if (block.type !== 'columns') return <Leaf block={block} settings={settings} />;
  const width = `${Math.floor(100 / block.columns.length)}%`;
  return (
    <Section>
      <Row>
        {block.columns.map((list, index) => (
          <Column key={index} className="herald-column" width={width} style={{ width, verticalAlign: 'top', padding: '0 8px' }}>
            {list.map((inner) => (
              <Leaf key={inner.id} block={inner} settings={settings} />
            ))}
          </Column>
        ))}
      </Row>
    </Section>
  );
}

const ENTITIES: Record<string, string> = { '&quot;': '"', '&#x27;': "'", '&amp;': '&', '&lt;': '<', '&gt;': '>' };

/**
 * React escapes quotes and ampersands everywhere, but liquid reads `{{ name | default: "there" }}` as written: inside
 * each merge tag the escapes are undone. In an attribute a double quote would end the value, so there it becomes a
 * single quote, which liquid reads the same.
 */
function restoreMergeTags(html: string): string {
  return html.replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, (tag, offset: number) => {
    const inAttribute = html.lastIndexOf('<', offset) > html.lastIndexOf('>', offset);
    return tag.replace(/&quot;|&#x27;|&amp;|&lt;|&gt;/g, (entity) => (inAttribute && entity === '&quot;' ? "'" : ENTITIES[entity]!));
  });
}

/** The email HTML of a design: a 600 px column centred on the page colour, each block a table row of its own. */
export function renderDesign(design: EmailDesign): string {
  const { settings } = design;
  const page: CSSProperties = { backgroundColor: settings.backgroundColor, margin: 0, padding: '24px 0', fontFamily: FONTS[settings.fontFamily] };
  const markup = renderToStaticMarkup(
    <Html lang="en">
      <Head>
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <style>{RESPONSIVE}</style>
      </Head>
      <Body style={page}>
        <Container style={{ maxWidth: 600, width: '100%', backgroundColor: settings.contentColor, padding: '16px 24px', fontFamily: FONTS[settings.fontFamily] }}>
          {design.blocks.map((block) => (
            <BlockView key={block.id} block={block} settings={settings} />
          ))}
        </Container>
      </Body>
    </Html>,
  );
  // React's server renderer announces each image with a preload <link> in the head: no mail client wants one.
  return DOCTYPE + restoreMergeTags(markup.replace(/<link rel="preload" as="image"[^>]*\/>/g, ''));
}
