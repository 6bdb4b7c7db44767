import { runClientConformance } from './conformance.js';
import { sglangWire } from './helpers/wires.js';

runClientConformance(sglangWire);
