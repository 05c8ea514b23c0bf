// Radix UI Select 2.4.1 (npm @radix-ui/react-select, with react 18.3.1): the headless select
// (unstyled; a few inline styles here) with a <label> on its trigger. Its trigger opens on
// pointerdown and its items choose on pointerup. Save shows the value its onValueChange gave.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import * as Select from '@radix-ui/react-select';

const fruits = [
  { value: 'apple', label: 'Apple' },
  { value: 'banana', label: 'Banana' },
  { value: 'grape', label: 'Grape' },
  { value: 'orange', label: 'Orange' },
  { value: 'pineapple', label: 'Pineapple' },
];

function Order() {
  const [fruit, setFruit] = useState('');
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <div style={{ width: 280 }}>
      <label htmlFor="fruit" style={{ display: 'block', marginTop: 12 }}>Fruit</label>
      <Select.Root value={fruit} onValueChange={setFruit}>
        <Select.Trigger id="fruit" style={{ display: 'flex', width: '100%', justifyContent: 'space-between', padding: 6 }}>
          <Select.Value placeholder="Choose a fruit" />
          <Select.Icon>▾</Select.Icon>
        </Select.Trigger>
        <Select.Portal>
          <Select.Content position="popper" sideOffset={4} style={{ background: 'white', border: '1px solid #999', width: 260 }}>
            <Select.Viewport style={{ padding: 4 }}>
              {fruits.map((f) => (
                <Select.Item key={f.value} value={f.value} style={{ padding: 6, cursor: 'default', outline: 'none' }}>
                  <Select.ItemText>{f.label}</Select.ItemText>
                </Select.Item>
              ))}
            </Select.Viewport>
          </Select.Content>
        </Select.Portal>
      </Select.Root>
      <button type="button" style={{ display: 'block', marginTop: 16 }} onClick={() => setSaved(`Saved: fruit=${fruit || '-'}`)}>Save</button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Order />);
