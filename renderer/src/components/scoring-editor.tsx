/**
 * A scoring file in a form: pick an example, paste or type one, or upload one (JSON or YAML), then
 * edit it in place. The text is parsed here only to send it as an object; what it means is checked by the
 * engine, whose errors name the field (`scorers.1.max`) and are shown under the editor.
 * New run (scorers that score each record as it lands) and Results (score a stored run) share it.
 * Runs on: renderer.
 */
import { useId, useState, type ChangeEvent } from 'react';
import { SCORING_EXAMPLES } from './scoring-examples.js';

/** Uploads larger than this are refused before they are read: a scoring file is a few kilobytes. */
const MAX_FILE_BYTES = 1024 * 1024;

export function ScoringEditor({
  text,
  onChange,
  testId,
}: {
  text: string;
  onChange: (text: string) => void;
  testId: string;
}) {
  const id = useId();
  const [picked, setPicked] = useState('');
  const [uploadError, setUploadError] = useState<string | null>(null);

  const onUpload = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      setUploadError(`${file.name} is ${Math.round(file.size / 1024)} KiB; a scoring file is at most 1 MiB`);
      return;
    }
    setUploadError(null);
    setPicked('');
    onChange(await file.text());
  };

  return (
    <div className="scoring-editor" data-testid={testId}>
      <div className="row wrap">
        <label className="inline-field" htmlFor={`${id}-example`}>
          <span>Start from</span>
        </label>
        <select
          id={`${id}-example`}
          data-testid={`${testId}-example`}
          value={picked}
          onChange={(e) => {
            setPicked(e.target.value);
            const example = SCORING_EXAMPLES.find((x) => x.id === e.target.value);
            if (example) onChange(example.text);
          }}
        >
          <option value="">an example…</option>
          {SCORING_EXAMPLES.map((x) => (
            <option key={x.id} value={x.id}>
              {x.label}
            </option>
          ))}
        </select>
        <label className="button file-button">
          Upload a scoring file…
          <input type="file" accept=".json,.yaml,.yml,application/json" data-testid={`${testId}-upload`} onChange={(e) => void onUpload(e)} />
        </label>
      </div>
      <label className="visually-hidden" htmlFor={`${id}-text`}>
        Scoring file (JSON or YAML)
      </label>
      <textarea
        id={`${id}-text`}
        className="mono scoring-text"
        data-testid={`${testId}-text`}
        rows={8}
        spellCheck={false}
        placeholder={'{"scorers": [{"name": "exact", "type": "match"}]}'}
        value={text}
        onChange={(e) => {
          setPicked('');
          onChange(e.target.value);
        }}
      />
      {uploadError ? (
        <div className="field-error" role="alert">
          {uploadError}
        </div>
      ) : null}
    </div>
  );
}
