import { App } from 'cdk8s';
import { addOperators } from './greeting-operator.js';

const app = new App();
addOperators(app);
app.synth();
