/**
 * Hands the client chosen at start-up to every view.
 * Runs on: renderer.
 */
import { createContext, useContext } from 'react';
import type { PanoptesClient } from './client.js';

export const ClientContext = createContext<PanoptesClient | null>(null);

export function useClient(): PanoptesClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useClient outside ClientContext');
  return client;
}
