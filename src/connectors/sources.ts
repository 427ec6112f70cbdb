export { file } from './file-source.js';
export { sequence } from './sequence-source.js';
