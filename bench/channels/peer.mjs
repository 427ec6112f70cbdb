// Worker threads do not inherit `--import tsx` on Node 20: register tsx here, then load the peer.
import { register } from 'tsx/esm/api';

register();
await import('./peer.ts');
