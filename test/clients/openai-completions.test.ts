import { runClientConformance } from './conformance.js';
import { openAiCompletionsWire } from './helpers/wires.js';

runClientConformance(openAiCompletionsWire);
