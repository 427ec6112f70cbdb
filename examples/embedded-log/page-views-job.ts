// The job of the embedded-log pattern (see service.ts and the README): page views appended to the
// embedded log by a Node service are counted per page, exactly once, into committed JSONL files.
//   args: data (the service's data directory)
import { defineJob, sinks, sources } from 'weir';

interface PageView {
  readonly page: string;
  readonly user: string;
  readonly at: number;
}

export default defineJob((env, args) => {
  const data = args.data ?? './weir-data';
  env
    .fromSource(sources.log<PageView>({ dir: `${data}/log`, topic: 'page-views' }), 'page views')
    .uid('page-views-source') // state is matched by uid on restore: one on every stateful operator
    .keyBy((v) => v.page)
    .process((v, ctx, out) => {
      const views = ctx.state.value<number>('views');
      const n = (views.value() ?? 0) + 1;
      views.update(n);
      out.collect({ page: v.page, views: n, user: v.user });
    })
    .name('views per page')
    .uid('views-per-page')
    .sinkTo(sinks.file({ dir: `${data}/page-views`, format: 'jsonl' }))
    .uid('page-views-files');
});
