// Generates proto/gen/ from the .proto files under proto/ (placeholder until the protos land).
import { mkdirSync } from 'node:fs';
mkdirSync(new URL('../proto/gen/', import.meta.url), { recursive: true });
