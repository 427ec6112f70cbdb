export { sequence } from './sequence-source.js';
