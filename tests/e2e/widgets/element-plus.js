// Element Plus 2.14.8 (npm element-plus, with vue 3.5.45): an el-select in a labelled form item,
// written with render functions (Vue's runtime-only build compiles no templates); Save shows
// the value the select's own v-model holds.
import { createApp, h, ref } from 'vue';
import { ElButton, ElForm, ElFormItem, ElOption, ElSelect } from 'element-plus';
import 'element-plus/dist/index.css';

const plans = [
  { value: 'basic', label: 'Basic' },
  { value: 'standard', label: 'Standard' },
  { value: 'premium', label: 'Premium' },
  { value: 'enterprise', label: 'Enterprise' },
];

const Page = {
  setup() {
    const plan = ref('');
    const saved = ref('Nothing saved');
    return () => h('div', { style: 'width: 320px' }, [
      h(ElForm, { labelPosition: 'top' }, () => [
        h(ElFormItem, { label: 'Plan' }, () => [
          h(ElSelect, {
            modelValue: plan.value,
            'onUpdate:modelValue': (value) => { plan.value = value; },
            placeholder: 'Choose a plan',
          }, () => plans.map((p) => h(ElOption, { key: p.value, label: p.label, value: p.value }))),
        ]),
      ]),
      h(ElButton, { type: 'primary', onClick: () => { saved.value = `Saved: plan=${plan.value || '-'}`; } }, () => 'Save'),
      h('p', { id: 'saved' }, saved.value),
    ]);
  },
};

createApp(Page).mount('#root');
