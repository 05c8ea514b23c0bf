// react-datepicker (npm), with its own stylesheet: a departure date, and a Save button that
// shows the date the form's own state holds.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import DatePicker from 'react-datepicker';
import 'react-datepicker/dist/react-datepicker.css';

function Trip() {
  const [date, setDate] = useState(null);
  const [saved, setSaved] = useState('Nothing saved');
  const iso = (d) => (d ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}` : '-');
  return (
    <div>
      <label htmlFor="departure">Departure date</label>
      <DatePicker id="departure" selected={date} onChange={setDate} dateFormat="yyyy-MM-dd" placeholderText="yyyy-mm-dd"
        openToDate={new Date(2026, 11, 1)} />
      <button type="button" onClick={() => setSaved(`Saved: departure=${iso(date)}`)}>Save</button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Trip />);
