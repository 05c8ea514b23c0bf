// Ant Design (npm): a Select in a form item with its label, and a Save button that shows the
// value the form's own state holds.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Form, Select, Button } from 'antd';

function Order() {
  const [fruit, setFruit] = useState(undefined);
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <Form layout="vertical" style={{ width: 300 }}>
      <Form.Item label="Fruit" name="fruit">
        <Select value={fruit} onChange={setFruit} placeholder="Choose a fruit"
          options={['Apple', 'Banana', 'Cherry', 'Damson'].map((f) => ({ value: f.toLowerCase(), label: f }))} />
      </Form.Item>
      <Button type="primary" onClick={() => setSaved(`Saved: fruit=${fruit ?? '-'}`)}>Save</Button>
      <p id="saved">{saved}</p>
    </Form>
  );
}

createRoot(document.getElementById('root')).render(<Order />);
