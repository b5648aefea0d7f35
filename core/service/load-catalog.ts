/**
 * The catalog a data folder uses: the embedded defaults (the common hosted models, then the mock
 * models), then `<dataDir>/catalog.json` if present, then the files the user names.
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog } from '../models/catalog.js';
import { examplesDir } from '../paths.js';

/** The layers in order, later ones winning. */
export function loadCatalog(dataDir: string, extra: string[] = []): Catalog {
  const layers = [Catalog.load(join(examplesDir(), 'hosted-catalog.json')), Catalog.load(join(examplesDir(), 'catalog.json'))];
  const user = join(dataDir, 'catalog.json');
  if (existsSync(user)) layers.push(Catalog.load(user));
  for (const p of extra) layers.push(Catalog.load(p));
  return layers.length === 1 ? layers[0]! : Catalog.merge(layers);
}
