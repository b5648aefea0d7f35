/**
 * The renderer's entry: picks the client (Electron IPC or the browser bridge), feeds pushed events
 * into the store once per animation frame, and renders the app.
 * Runs on: renderer.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ClientContext } from './api/client-context.js';
import { connect } from './api/connect.js';
import { App } from './app.js';
import { ingest, setConnection } from './state/app-store.js';
import { coalescePerRender } from './state/render-coalescer.js';
import './styles/theme.css';
import './styles/app.css';
import './styles/results.css';
import './styles/answers.css';

function NoLaunchToken() {
  return (
    <div className="empty standalone">
      <h1>Panoptes</h1>
      <p>
        This page needs the address that <span className="mono">panoptes serve --ui</span> (or <span className="mono">npm start</span>) printed when it started (it
        ends in <span className="mono">#token=…</span>). Open that address instead.
      </p>
    </div>
  );
}

const root = createRoot(document.getElementById('root')!);
const client = connect();
if (client === null) {
  root.render(<NoLaunchToken />);
} else {
  client.onEvent(coalescePerRender(ingest));
  client.onConnection(setConnection);
  root.render(
    <StrictMode>
      <ClientContext.Provider value={client}>
        <App />
      </ClientContext.Provider>
    </StrictMode>,
  );
}
