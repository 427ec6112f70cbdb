// Worker threads cannot load .ts directly: register tsx, then load the real module.
import { register } from 'tsx/esm/api';

register();
await import('./thread-appender.ts');
