import { runClientConformance } from './conformance.js';
import { openAiChatWire } from './helpers/wires.js';

runClientConformance(openAiChatWire);
