import { Construct } from 'constructs';
import { App, Chart, ChartProps } from 'cdk8s';
import { StaticSiteOperator } from './static-site-operator';

export class MyChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = { }) {
    super(scope, id, props);

    // define resources here

  }
}

const app = new App();
new MyChart(app, 'cdk8s-init-app');
new StaticSiteOperator(app);
app.synth();
