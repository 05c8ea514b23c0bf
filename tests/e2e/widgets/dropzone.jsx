// react-dropzone (npm), as sites use it: a drop area with its file field hidden inside, which
// takes a PDF CV by drop or by picking.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useDropzone } from 'react-dropzone';

function CvUpload() {
  const [taken, setTaken] = useState([]);
  const [refused, setRefused] = useState([]);
  const { getRootProps, getInputProps } = useDropzone({
    accept: { 'application/pdf': ['.pdf'] },
    maxFiles: 1,
    onDrop: (accepted, rejections) => {
      setTaken(accepted.map((f) => `${f.name} (${f.size} bytes)`));
      setRefused(rejections.map((r) => r.file.name));
    },
  });
  return (
    <section>
      <h2>Your CV</h2>
      <div {...getRootProps({ className: 'dropzone' })}>
        <input {...getInputProps()} />
        <p>Drag your CV here, or click to choose it (PDF only)</p>
      </div>
      <p id="taken">{taken.length ? `Uploaded: ${taken.join(', ')}` : 'No CV yet'}</p>
      <p id="refused">{refused.length ? `Refused: ${refused.join(', ')}` : ''}</p>
    </section>
  );
}

createRoot(document.getElementById('root')).render(<CvUpload />);
