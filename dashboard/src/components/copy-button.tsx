// A small button that copies a value (a DNS record, a webhook URL) to the clipboard and says so.
import { useState } from 'react';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
  };
  return (
    <button type="button" className="copy" onClick={() => void copy()} aria-label={`${copied ? 'Copied' : 'Copy'} ${label}`}>
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
